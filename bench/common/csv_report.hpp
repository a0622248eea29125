// What the GPU benchmarks share: exit on an error that makes a measurement meaningless, times in µs,
// percentiles, comma-separated arguments, and one CSV row per figure (part,case,variant,metric,value), which
// scripts/gpu-check tabulates.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"
#include "common/exit_now.hpp"

namespace accel::bench {

template <class T>
T require(Result<T> result, const char* what) {
  if (!result.ok()) {
    fmt::print(stderr, "{}: {}\n", what, result.status().to_string());
    exit_now(1);
  }
  return std::move(*result);
}

inline double micros(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// The items of a comma-separated argument ("gemv,trsm", "256,1024"), empty ones skipped.
inline std::vector<std::string> split_list(std::string_view list) {
  std::vector<std::string> items;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    if (comma != 0) items.emplace_back(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return items;
}

inline double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

inline void row(std::string_view part, std::string_view name, std::string_view variant, std::string_view metric,
                double value) {
  fmt::print("{},{},{},{},{:.3f}\n", part, name, variant, metric, value);
  std::fflush(stdout);
}

}  // namespace accel::bench

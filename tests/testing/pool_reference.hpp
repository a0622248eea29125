// Every graph pool mode written out in double precision, for the kernel and graph tests to check against.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "accel/graph/pool_mode.hpp"

namespace accel::graph::testing {

inline constexpr PoolMode kPoolModes[] = {
    PoolMode::mean,         PoolMode::max, PoolMode::first, PoolMode::last, PoolMode::mean_sqrt_length,
    PoolMode::weighted_mean};

// x [rows, width] (rows past offsets.back() are padding and never read) -> [offsets.size() - 1, width].
inline std::vector<double> pool_reference(PoolMode mode, const std::vector<float>& x, std::int64_t width,
                                          const std::vector<std::int32_t>& offsets) {
  const std::int64_t sequences = static_cast<std::int64_t>(offsets.size()) - 1;
  std::vector<double> out(static_cast<std::size_t>(sequences * width), 0.0);
  for (std::int64_t s = 0; s < sequences; ++s) {
    const std::int64_t begin = offsets[s], n = offsets[s + 1] - offsets[s];
    if (n <= 0) continue;
    for (std::int64_t c = 0; c < width; ++c) {
      auto at = [&](std::int64_t i) { return double{x[(begin + i) * width + c]}; };
      double sum = 0, weighted = 0, weights = 0, largest = -std::numeric_limits<double>::infinity();
      for (std::int64_t i = 0; i < n; ++i) {
        sum += at(i);
        weighted += double(i + 1) * at(i);
        weights += double(i + 1);
        largest = std::max(largest, at(i));
      }
      double& o = out[s * width + c];
      switch (mode) {
        case PoolMode::mean: o = sum / double(n); break;
        case PoolMode::max: o = largest; break;
        case PoolMode::first: o = at(0); break;
        case PoolMode::last: o = at(n - 1); break;
        case PoolMode::mean_sqrt_length: o = sum / std::sqrt(double(n)); break;
        case PoolMode::weighted_mean: o = weighted / weights; break;
      }
    }
  }
  return out;
}

}  // namespace accel::graph::testing

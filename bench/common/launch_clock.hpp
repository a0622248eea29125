// The time a process spent before `main` (the dynamic loader, the libraries' constructors), which no clock started
// in `main` can see: whoever starts the process sets ACCEL_LAUNCH_NS=$(date +%s%N), and `main` reads the wall clock
// as its first step.
#pragma once

#include <chrono>
#include <cstdlib>
#include <optional>

namespace accel::bench {

// Milliseconds from ACCEL_LAUNCH_NS to `main_started`; none when the variable is not set.
inline std::optional<double> ms_before_main(std::chrono::system_clock::time_point main_started) {
  const char* launched = std::getenv("ACCEL_LAUNCH_NS");
  if (launched == nullptr) return std::nullopt;
  const auto main_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(main_started.time_since_epoch()).count();
  return static_cast<double>(main_ns - std::atoll(launched)) / 1e6;
}

}  // namespace accel::bench

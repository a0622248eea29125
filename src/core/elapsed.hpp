// Host time spent, for the SUM counters of caches and loaders.
#pragma once

#include <chrono>
#include <cstdint>

namespace accel {

[[nodiscard]] inline std::uint64_t micros_since(std::chrono::steady_clock::time_point start) noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace accel

// Hits and misses of a choice that is not a cache but is reported as one: a structure check skipped or run, a counted
// product handed over or copied. A miss is also a build. Counted by the stream's thread, read by device reports from
// any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "accel/core/cache_stats.hpp"

namespace accel::cache {

class HitCounts {
 public:
  void count(bool hit) noexcept { (hit ? hits_ : misses_).fetch_add(1, std::memory_order_relaxed); }

  [[nodiscard]] CacheStats stats(std::string name) const {
    const std::uint64_t misses = misses_.load(std::memory_order_relaxed);
    return CacheStats{
        .name = std::move(name), .hits = hits_.load(std::memory_order_relaxed), .misses = misses, .builds = misses};
  }

 private:
  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> misses_{0};
};

}  // namespace accel::cache

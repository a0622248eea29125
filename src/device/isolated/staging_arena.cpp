#include "device/isolated/staging_arena.hpp"

#include <chrono>
#include <iterator>

namespace accel::device::isolated {

StagingArena::StagingArena(std::uint64_t capacity) : capacity_(capacity / kAlignment * kAlignment) {
  if (capacity_ != 0) free_.emplace(0, capacity_);
}

std::optional<StagingRange> StagingArena::try_take(std::uint64_t bytes) {
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < bytes) continue;
    StagingRange range{.offset = it->first, .bytes = bytes};
    const std::uint64_t rest = it->second - bytes;
    const std::uint64_t rest_offset = it->first + bytes;
    free_.erase(it);
    if (rest != 0) free_.emplace(rest_offset, rest);
    return range;
  }
  return std::nullopt;
}

std::optional<StagingRange> StagingArena::allocate(std::uint64_t bytes, const std::function<bool()>& give_up) {
  const std::uint64_t rounded = (std::max<std::uint64_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded > capacity_) return std::nullopt;
  std::unique_lock lock(mutex_);
  while (true) {
    if (std::optional<StagingRange> range = try_take(rounded)) return range;
    if (give_up()) return std::nullopt;
    returned_.wait_for(lock, std::chrono::milliseconds(1));
  }
}

void StagingArena::release(StagingRange range) {
  if (range.bytes == 0) return;
  {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = free_.emplace(range.offset, range.bytes);
    if (auto next = std::next(it); next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto previous = std::prev(it);
      if (previous->first + previous->second == it->first) {
        previous->second += it->second;
        free_.erase(it);
      }
    }
  }
  returned_.notify_all();
}

}  // namespace accel::device::isolated

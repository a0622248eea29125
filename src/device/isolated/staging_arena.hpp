// Hands out ranges of the channel's staging region to copies in flight. First fit over a free list kept in
// address order, so neighbours merge when they come back. A caller that finds no room waits until a reply
// gives some back.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

namespace accel::device::isolated {

struct StagingRange {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;  // 0: no range
};

class StagingArena {
 public:
  static constexpr std::uint64_t kAlignment = 256;

  explicit StagingArena(std::uint64_t capacity);

  // A range of at least `bytes` (<= capacity()); waits while there is no room, and gives up (nothing) once
  // `give_up()` says so. `give_up` is checked whenever a range is returned and at least every millisecond.
  [[nodiscard]] std::optional<StagingRange> allocate(std::uint64_t bytes, const std::function<bool()>& give_up);
  void release(StagingRange range);

  [[nodiscard]] std::uint64_t capacity() const noexcept { return capacity_; }

 private:
  std::optional<StagingRange> try_take(std::uint64_t bytes);

  const std::uint64_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable returned_;
  std::map<std::uint64_t, std::uint64_t> free_;  // offset -> bytes
};

}  // namespace accel::device::isolated

// Reusable CUDA resources of one device: events (each request's completion and ordering point) and pinned
// host blocks (staging for copies from and to pageable memory). Both pools are shared by the device's
// streams and by its completion thread, so they lock; a pooled object goes back when its last holder drops it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "accel/core/result.hpp"

namespace accel::device::cuda {

class EventPool;

// An event of one stream: recorded at once (EventPool::record), or a mark of the stream's work so far, recorded
// when first needed (EventPool::mark). A stream gives one mark to each request of a burst and records it once, as the
// burst ends or when another stream must wait for it; recorded late, it covers the same work and perhaps more of
// its stream's, never less. Shared: a buffer's ordering state and a pending completion may both hold it.
//
// A mark is recorded only by its stream's thread or under its device's buffers lock, and read by other threads
// only after that (a completion is deferred once its mark is recorded).
class Event {
 public:
  Event(cudaEvent_t event, cudaStream_t stream, std::shared_ptr<EventPool> pool) noexcept
      : event_(event), stream_(stream), pool_(std::move(pool)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  // The event, recorded on its stream first if it was not yet.
  [[nodiscard]] Result<cudaEvent_t> recorded() const;
  [[nodiscard]] bool is_recorded() const noexcept { return recorded_; }

 private:
  cudaEvent_t event_;
  cudaStream_t stream_;
  mutable bool recorded_ = false;
  std::shared_ptr<EventPool> pool_;
};
using EventRef = std::shared_ptr<const Event>;

class EventPool : public std::enable_shared_from_this<EventPool> {
 public:
  ~EventPool();
  // An event recorded on `stream` now.
  [[nodiscard]] Result<EventRef> record(cudaStream_t stream);
  // A mark of `stream`'s work so far, not recorded yet.
  [[nodiscard]] Result<EventRef> mark(cudaStream_t stream);
  void give_back(cudaEvent_t event) noexcept;

 private:
  std::mutex mutex_;
  std::vector<cudaEvent_t> free_;
};

class PinnedPool;

// A page-locked host block from the pool; returned to it when destroyed.
class PinnedBlock {
 public:
  PinnedBlock() = default;
  PinnedBlock(std::byte* data, std::size_t capacity, std::shared_ptr<PinnedPool> pool) noexcept
      : data_(data), capacity_(capacity), pool_(std::move(pool)) {}
  PinnedBlock(PinnedBlock&& other) noexcept { *this = std::move(other); }
  PinnedBlock& operator=(PinnedBlock&& other) noexcept;
  ~PinnedBlock() { reset(); }
  void reset() noexcept;
  [[nodiscard]] std::byte* data() const noexcept { return data_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::shared_ptr<PinnedPool> pool_;
};

// Blocks in power-of-two size classes from 64 KiB; at most `cache_bytes` are kept for reuse (cudaFreeHost
// synchronises the whole device, so blocks are freed only beyond that bound or with the pool).
class PinnedPool : public std::enable_shared_from_this<PinnedPool> {
 public:
  explicit PinnedPool(std::size_t cache_bytes) : cache_bytes_(cache_bytes) {}
  ~PinnedPool();
  [[nodiscard]] Result<PinnedBlock> take(std::size_t bytes);
  void give_back(std::byte* data, std::size_t capacity) noexcept;

 private:
  const std::size_t cache_bytes_;
  std::mutex mutex_;
  std::multimap<std::size_t, std::byte*> free_;  // capacity -> block
  std::size_t cached_bytes_ = 0;
};

// The CUDA host allocation or registration that holds every byte of [data, data + bytes) (bytes > 0): page-locked
// memory CUDA can copy from or to asynchronously, all of it. Named by the driver's buffer id, which no other
// allocation or registration in the process takes, even at the same address: a CUDA graph's copy captured over memory
// since unregistered and registered again faults (a sticky error) where it is launched. Nullopt where some of the
// range is not pinned, or it spans two allocations.
[[nodiscard]] std::optional<std::uint64_t> pinned_host_allocation(const void* data, std::size_t bytes) noexcept;

}  // namespace accel::device::cuda

// Reusable CUDA resources of one device: events (each request's completion and ordering point) and pinned
// host blocks (staging for copies from and to pageable memory). Both pools are shared by the device's
// streams and by its completion thread, so they lock; a pooled object goes back when its last holder drops it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "accel/core/result.hpp"

namespace accel::device::cuda {

class EventPool;

// A recorded event. Shared: a buffer's ordering state and a pending completion may both hold it.
class Event {
 public:
  Event(cudaEvent_t event, std::shared_ptr<EventPool> pool) noexcept : event_(event), pool_(std::move(pool)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_;
  std::shared_ptr<EventPool> pool_;
};
using EventRef = std::shared_ptr<const Event>;

class EventPool : public std::enable_shared_from_this<EventPool> {
 public:
  ~EventPool();
  // An event recorded on `stream` now.
  [[nodiscard]] Result<EventRef> record(cudaStream_t stream);
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

// True when `pointer` is page-locked host memory CUDA can copy from or to asynchronously.
[[nodiscard]] bool is_pinned_host(const void* pointer) noexcept;

}  // namespace accel::device::cuda

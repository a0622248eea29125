// Device buffers: a plain-data handle (what requests carry) and a typed, shared-ownership Buffer<T>.
//
// A BufferHandle names a buffer by (device, slot, epoch, generation). The device checks all four on every use,
// so a handle that outlived its memory is refused with `stale_handle` instead of touching freed memory:
//   - after the buffer was freed (the slot's generation moved on), and
//   - after the device's context was rebuilt (the epoch moved on; every handle of the old context is stale).
//
// Buffer<T> adds ownership: copies share one owner, and when the last copy goes away the buffer is freed.
// Freeing it explicitly (Device::free) frees it for every copy at once; their next use is `stale_handle`.
// Any number of requests may read and write the same buffer; the device orders them (see docs/ARCHITECTURE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>

#include "accel/device/dtype.hpp"

namespace accel {

struct BufferHandle {
  static constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();

  std::uint32_t device = 0;      // the opened device's unique id in this process
  std::uint32_t slot = kNoSlot;  // index in the device's buffer table
  std::uint32_t epoch = 0;       // the context generation the buffer was allocated in
  std::uint64_t generation = 0;  // the allocation's serial number on that device
  DType dtype = DType::f32;
  std::uint64_t count = 0;  // elements

  [[nodiscard]] bool is_null() const noexcept { return slot == kNoSlot; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return count * size_of(dtype); }
  friend bool operator==(const BufferHandle&, const BufferHandle&) noexcept = default;
};

[[nodiscard]] std::string to_string(const BufferHandle& handle);

namespace detail {
// Frees a buffer when its last Buffer<T> owner goes away. Implemented by the device.
class BufferReleaser {
 public:
  virtual ~BufferReleaser() = default;
  virtual void release(const BufferHandle& handle) noexcept = 0;
};

class BufferOwner {
 public:
  BufferOwner(BufferHandle handle, std::weak_ptr<BufferReleaser> releaser) noexcept
      : handle_(handle), releaser_(std::move(releaser)) {}
  BufferOwner(const BufferOwner&) = delete;
  BufferOwner& operator=(const BufferOwner&) = delete;
  ~BufferOwner() {
    if (auto releaser = releaser_.lock()) releaser->release(handle_);
  }
  [[nodiscard]] const BufferHandle& handle() const noexcept { return handle_; }

 private:
  BufferHandle handle_;
  std::weak_ptr<BufferReleaser> releaser_;
};
}  // namespace detail

template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::shared_ptr<const detail::BufferOwner> owner) noexcept : owner_(std::move(owner)) {}

  [[nodiscard]] BufferHandle handle() const noexcept { return owner_ ? owner_->handle() : BufferHandle{}; }
  operator BufferHandle() const noexcept { return handle(); }  // NOLINT(google-explicit-constructor)

  [[nodiscard]] std::uint64_t size() const noexcept { return handle().count; }
  [[nodiscard]] std::uint64_t bytes() const noexcept { return handle().bytes(); }
  [[nodiscard]] bool is_null() const noexcept { return owner_ == nullptr; }
  [[nodiscard]] long use_count() const noexcept { return owner_.use_count(); }

  friend bool operator==(const Buffer& a, const Buffer& b) noexcept { return a.handle() == b.handle(); }

 private:
  std::shared_ptr<const detail::BufferOwner> owner_;
};

// Caller-owned host memory that a copy request reads or writes. It must stay valid until the request's
// future is ready. (An isolated device copies it through a shared staging region; the request is unchanged.)
struct HostSource {
  const void* data = nullptr;
  std::uint64_t count = 0;  // elements
  DType dtype = DType::f32;

  template <class T>
  static HostSource of(std::span<const T> span) noexcept {
    return {span.data(), span.size(), dtype_of<T>()};
  }
};

struct HostDestination {
  void* data = nullptr;
  std::uint64_t count = 0;  // elements
  DType dtype = DType::f32;

  template <class T>
  static HostDestination of(std::span<T> span) noexcept {
    return {span.data(), span.size(), dtype_of<T>()};
  }
};

}  // namespace accel

template <>
struct std::hash<accel::BufferHandle> {
  std::size_t operator()(const accel::BufferHandle& h) const noexcept {
    std::size_t seed = std::hash<std::uint64_t>{}(h.generation);
    seed ^= std::hash<std::uint64_t>{}((std::uint64_t{h.device} << 32) | h.slot) + 0x9e3779b97f4a7c15ULL + (seed << 6) +
            (seed >> 2);
    return seed ^ (std::uint64_t{h.epoch} << 17);
  }
};

/// @file
/// Device buffers as users hold them: a typed, shared-ownership Buffer<T> over a BufferHandle
/// (accel/core/buffer_handle.hpp).
///
/// Buffer<T> adds ownership: copies share one owner, and when the last copy goes away the buffer is freed.
/// Freeing it explicitly (Device::free) frees it for every copy at once; their next use is `stale_handle`.
/// Any number of requests may read and write the same buffer; the device orders them (see docs/ARCHITECTURE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>

#include "accel/core/buffer_handle.hpp"

namespace accel {

namespace detail {
/// Frees a buffer when its last Buffer<T> owner goes away. Implemented by the device.
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

/// A device buffer of T elements, freed when its last copy is dropped; converts to the BufferHandle requests take.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  /// The buffer `owner` holds (Device::allocate makes them).
  explicit Buffer(std::shared_ptr<const detail::BufferOwner> owner) noexcept : owner_(std::move(owner)) {}

  /// The buffer's handle; null for an empty Buffer.
  [[nodiscard]] BufferHandle handle() const noexcept { return owner_ ? owner_->handle() : BufferHandle{}; }
  /// The buffer's handle, for requests.
  operator BufferHandle() const noexcept { return handle(); }  // NOLINT(google-explicit-constructor)

  /// Elements of T.
  [[nodiscard]] std::uint64_t size() const noexcept { return handle().count; }
  /// Bytes.
  [[nodiscard]] std::uint64_t bytes() const noexcept { return handle().bytes(); }
  /// Whether this holds no buffer.
  [[nodiscard]] bool is_null() const noexcept { return owner_ == nullptr; }
  /// Copies of this Buffer holding the allocation.
  [[nodiscard]] long use_count() const noexcept { return owner_.use_count(); }

  /// Whether both name the same allocation.
  friend bool operator==(const Buffer& a, const Buffer& b) noexcept { return a.handle() == b.handle(); }

 private:
  std::shared_ptr<const detail::BufferOwner> owner_;
};

}  // namespace accel

/// @file
/// accel::BufferHandle — the plain-data name of a device buffer that requests carry, and the caller-owned host
/// memory of copies. The vocabulary of every request: devices resolve handles, library families name them.
///
/// A BufferHandle names a buffer by (device, slot, epoch, generation). The device checks all four on every use,
/// so a handle that outlived its memory is refused with `stale_handle` instead of touching freed memory:
///   - after the buffer was freed (the slot's generation moved on), and
///   - after the device's context was rebuilt (the epoch moved on; every handle of the old context is stale).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>

#include "accel/core/dtype.hpp"

namespace accel {

/// The plain-data name of a device buffer (see the file's description); copying it copies no memory.
struct BufferHandle {
  static constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();  ///< The slot of the null handle.

  std::uint32_t device = 0;      ///< the opened device's unique id in this process
  std::uint32_t slot = kNoSlot;  ///< index in the device's buffer table
  std::uint32_t epoch = 0;       ///< the context generation the buffer was allocated in
  std::uint64_t generation = 0;  ///< the allocation's serial number on that device
  DType dtype = DType::f32;      ///< element type
  std::uint64_t count = 0;       ///< elements

  /// Whether this names no buffer.
  [[nodiscard]] bool is_null() const noexcept { return slot == kNoSlot; }
  /// The buffer's size in bytes.
  [[nodiscard]] std::uint64_t bytes() const noexcept { return count * size_of(dtype); }
  /// Equal when every field is: the same allocation.
  friend bool operator==(const BufferHandle&, const BufferHandle&) noexcept = default;
};

/// "buffer #3 (device 1, epoch 0, generation 7, 1024 x f32)" or "null buffer", for messages.
[[nodiscard]] std::string to_string(const BufferHandle& handle);

/// Caller-owned host memory that a copy request reads or writes. It must stay valid until the request's
/// future is ready. (An isolated device copies it through a shared staging region; the request is unchanged.)
struct HostSource {
  const void* data = nullptr;  ///< the first element
  std::uint64_t count = 0;     ///< elements
  DType dtype = DType::f32;    ///< element type

  /// A source over `span`.
  template <class T>
  static HostSource of(std::span<const T> span) noexcept {
    return {span.data(), span.size(), dtype_of<T>()};
  }
};

/// Caller-owned host memory that a copy request writes. It must stay alive until the request completes.
struct HostDestination {
  void* data = nullptr;      ///< the first element
  std::uint64_t count = 0;   ///< elements
  DType dtype = DType::f32;  ///< element type

  /// A destination over `span`.
  template <class T>
  static HostDestination of(std::span<T> span) noexcept {
    return {span.data(), span.size(), dtype_of<T>()};
  }
};

}  // namespace accel

// Not accel's API, and Doxygen 1.9.4 cannot place a specialisation declared as `struct std::hash<...>`.
/// @cond
template <>
struct std::hash<accel::BufferHandle> {
  std::size_t operator()(const accel::BufferHandle& h) const noexcept {
    std::size_t seed = std::hash<std::uint64_t>{}(h.generation);
    seed ^= std::hash<std::uint64_t>{}((std::uint64_t{h.device} << 32) | h.slot) + 0x9e3779b97f4a7c15ULL + (seed << 6) +
            (seed >> 2);
    return seed ^ (std::uint64_t{h.epoch} << 17);
  }
};
/// @endcond

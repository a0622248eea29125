// The device's own requests: memory and copies. Plain data, the same for every kind of device.
#pragma once

#include <cstdint>
#include <string>

#include "accel/core/result.hpp"
#include "accel/device/buffer.hpp"

namespace accel {

enum class DeviceKind : std::uint8_t { cpu, cuda };
[[nodiscard]] std::string_view to_string(DeviceKind kind) noexcept;

// Every field is labelled COUNT (events since the context was built) or SUM (bytes now).
struct MemoryStats {
  std::uint64_t in_use_bytes = 0;        // SUM: bytes held by live buffers
  std::uint64_t peak_bytes = 0;          // SUM: the highest in_use_bytes seen
  std::uint64_t reserved_bytes = 0;      // SUM: bytes the allocator holds from the system, live or cached
  std::uint64_t live_buffers = 0;        // SUM: buffers allocated and not freed
  std::uint64_t allocations = 0;         // COUNT
  std::uint64_t frees = 0;               // COUNT
  std::uint64_t failed_allocations = 0;  // COUNT
};

struct DeviceInfo {
  DeviceKind kind = DeviceKind::cpu;
  int ordinal = 0;
  std::uint32_t device_id = 0;  // the id buffer handles carry
  std::uint32_t epoch = 0;      // the current context generation
  std::string name;
  std::string blas_library;  // e.g. "OpenBLAS 0.3.21" or "cuBLASLt 13.0"
  std::uint64_t memory_capacity_bytes = 0;
  MemoryStats memory;
};

struct Allocate {
  static constexpr const char* kName = "Allocate";
  using Response = BufferHandle;
  DType dtype = DType::f32;
  std::uint64_t count = 0;  // elements; 0 is refused
};

struct Free {
  static constexpr const char* kName = "Free";
  using Response = Done;
  BufferHandle buffer;
};

struct CopyToDevice {
  static constexpr const char* kName = "CopyToDevice";
  using Response = Done;
  HostSource source;
  BufferHandle destination;
  std::uint64_t destination_offset = 0;  // elements
};

struct CopyToHost {
  static constexpr const char* kName = "CopyToHost";
  using Response = Done;
  BufferHandle source;
  std::uint64_t source_offset = 0;  // elements
  HostDestination destination;
};

struct CopyOnDevice {
  static constexpr const char* kName = "CopyOnDevice";
  using Response = Done;
  BufferHandle source;
  std::uint64_t source_offset = 0;
  BufferHandle destination;
  std::uint64_t destination_offset = 0;
  std::uint64_t count = 0;  // elements
};

struct QueryDevice {
  static constexpr const char* kName = "QueryDevice";
  using Response = DeviceInfo;
};

// Frees every buffer and starts a new context epoch: every existing handle of the device becomes stale.
struct ResetContext {
  static constexpr const char* kName = "ResetContext";
  using Response = Done;
};

}  // namespace accel

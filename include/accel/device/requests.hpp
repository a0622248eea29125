/// @file
/// The device's own requests: memory and copies. Plain data, the same for every kind of device.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/cache_stats.hpp"
#include "accel/core/library_version.hpp"
#include "accel/core/result.hpp"
#include "accel/device/buffer.hpp"

namespace accel {

/// The kinds of device a Device can open.
enum class DeviceKind : std::uint8_t { cpu, cuda };
/// The enumerator's name, for messages and descriptions.
[[nodiscard]] std::string_view to_string(DeviceKind kind) noexcept;

/// How a CUDA device learns that a request's GPU work has finished (see docs/ARCHITECTURE.md):
///   poller         one thread per device polls the requests' events, spinning while work is pending;
///   host_callback  cudaLaunchHostFunc after the work; replies (and their continuations) run on CUDA's
///                  callback thread, so continuations must not call CUDA or block;
///   blocking       the device actor waits for each request's event before taking the next request.
enum class CompletionStrategy : std::uint8_t { poller, host_callback, blocking };
/// The enumerator's name, for messages and descriptions.
[[nodiscard]] std::string_view to_string(CompletionStrategy strategy) noexcept;

/// Every field is labelled COUNT (events since the context was built) or SUM (bytes now).
struct MemoryStats {
  std::uint64_t in_use_bytes = 0;        ///< SUM: bytes held by live buffers
  std::uint64_t peak_bytes = 0;          ///< SUM: the highest in_use_bytes seen
  std::uint64_t reserved_bytes = 0;      ///< SUM: bytes the allocator holds from the system, live or cached
  std::uint64_t live_buffers = 0;        ///< SUM: buffers allocated and not freed
  std::uint64_t allocations = 0;         ///< COUNT
  std::uint64_t frees = 0;               ///< COUNT
  std::uint64_t failed_allocations = 0;  ///< COUNT
};

/// Lists rather than a field per library family, so that neither this struct nor its wire encoding changes when
/// a family is added.
struct DeviceInfo {
  DeviceKind kind = DeviceKind::cpu;        ///< CPU or CUDA
  int ordinal = 0;                          ///< the CUDA device ordinal; 0 for the CPU
  std::uint32_t device_id = 0;              ///< the id buffer handles carry
  std::uint32_t epoch = 0;                  ///< the current context generation
  std::string name;                         ///< "cpu:0", or "cuda:0 (NVIDIA H200)": kind, ordinal and the GPU's name
  std::uint64_t memory_capacity_bytes = 0;  ///< SUM: the memory the device may allocate (its limit, or the GPU's)
  int compute_capability = 0;               ///< major * 10 + minor; 0 for the CPU
  CompletionStrategy completion = CompletionStrategy::poller;  ///< how the device learns that GPU work has finished
  std::uint64_t device_free_bytes = 0;    ///< SUM: free memory of the whole GPU as the driver reports it; 0 for the CPU
  MemoryStats memory;                     ///< the buffer allocator's counters
  std::vector<LibraryVersion> libraries;  ///< the library versions the device answers requests with
  /// Every cache of the device, by name (caches of one stream are the answering stream's): "cublaslt-plans",
  /// "cudnn-plans", "jit-binaries", "jit-programs", "jit-modules". Persistent ones name their directory.
  std::vector<CacheStats> caches;
  /// Isolated devices only (0 in process): the worker process serving the device now (0 while a lost one is being
  /// replaced), and how many workers replaced a lost one since the device was opened (COUNT).
  std::int32_t worker_pid = 0;
  /// COUNT: workers that replaced a lost one since the device was opened (isolated devices only)
  std::uint64_t worker_restarts = 0;

  /// The cache or library of that name; null when the device has none.
  [[nodiscard]] const CacheStats* cache(std::string_view cache_name) const noexcept {
    for (const CacheStats& stats : caches) {
      if (stats.name == cache_name) return &stats;
    }
    return nullptr;
  }
  /// The library of that name; null when the device has none.
  [[nodiscard]] const LibraryVersion* library(std::string_view library_name) const noexcept {
    for (const LibraryVersion& library : libraries) {
      if (library.name == library_name) return &library;
    }
    return nullptr;
  }
};

/// Allocates a buffer of `count` elements of `dtype` and answers its handle.
struct Allocate {
  static constexpr const char* kName = "Allocate";
  using Response = BufferHandle;
  DType dtype = DType::f32;  ///< the element type
  std::uint64_t count = 0;   ///< elements; 0 is refused
};

/// Frees a buffer; its handle becomes stale.
struct Free {
  static constexpr const char* kName = "Free";
  using Response = Done;
  BufferHandle buffer;  ///< the buffer to free
};

/// Copies caller-owned host memory into a buffer.
struct CopyToDevice {
  static constexpr const char* kName = "CopyToDevice";
  using Response = Done;
  HostSource source;                     ///< the host memory read
  BufferHandle destination;              ///< the buffer written
  std::uint64_t destination_offset = 0;  ///< elements
};

/// Copies a buffer's elements into caller-owned host memory.
struct CopyToHost {
  static constexpr const char* kName = "CopyToHost";
  using Response = Done;
  BufferHandle source;              ///< the buffer read
  std::uint64_t source_offset = 0;  ///< elements
  HostDestination destination;      ///< the host memory written
};

/// Copies `count` elements between two buffers of the same device; on an in-process CUDA device, also from a buffer of
/// another in-process CUDA device, peer to peer (accel/device/peer.hpp, which copies between any two devices).
struct CopyOnDevice {
  static constexpr const char* kName = "CopyOnDevice";
  using Response = Done;
  BufferHandle source;                   ///< the buffer read
  std::uint64_t source_offset = 0;       ///< elements
  BufferHandle destination;              ///< the buffer written
  std::uint64_t destination_offset = 0;  ///< elements
  std::uint64_t count = 0;               ///< elements
};

/// Answers the device's DeviceInfo: kind, memory, libraries and caches.
struct QueryDevice {
  static constexpr const char* kName = "QueryDevice";
  using Response = DeviceInfo;
};

/// Frees every buffer and starts a new context epoch: every existing handle of the device becomes stale.
struct ResetContext {
  static constexpr const char* kName = "ResetContext";
  using Response = Done;
};

/// A point in the order of one stream of a device: after every request sent to that stream before the
/// RecordFence that made it. Plain data like a BufferHandle; the device checks each field when it is waited for.
struct Fence {
  std::uint32_t device = 0;    ///< the opened device's unique id in this process
  std::uint32_t stream = 0;    ///< which stream of the device recorded it (the CPU device has one)
  std::uint32_t epoch = 0;     ///< the context generation it was recorded in
  std::uint64_t sequence = 0;  ///< its serial number in that context; 0 for no fence

  /// Whether this is no fence.
  [[nodiscard]] bool is_null() const noexcept { return sequence == 0; }
  /// Equal when every field is.
  friend bool operator==(const Fence&, const Fence&) noexcept = default;
};
/// The fence as text, for messages.
[[nodiscard]] std::string to_string(const Fence& fence);

/// A fence after every request sent to this stream so far. Answered at once: the work it follows may still run.
struct RecordFence {
  static constexpr const char* kName = "RecordFence";
  using Response = Fence;
};

/// Every request sent to this stream after WaitFence runs after the fence's point (another stream's, of the same
/// device). On a CUDA device the stream waits for the fence's event on the GPU; the host waits for nothing, and
/// the reply comes at once. On the CPU device (one ordered thread) a valid fence is already behind. Refused:
/// a null fence, another device's or one never recorded (invalid_argument), one recorded before the context was
/// rebuilt (stale_handle).
struct WaitFence {
  static constexpr const char* kName = "WaitFence";
  using Response = Done;
  Fence fence;  ///< the fence to wait for
};

/// What a JoinOrders does at its point of the device's order.
enum class JoinRole : std::uint8_t {
  hold,     ///< arrive, then keep the device's later requests back until the meeting is released
  meet,     ///< go on once the holding device has arrived
  release,  ///< let the holding device go on
};

/// Joins the orders of two in-process devices (or streams) at one point, so that a request can take its place in
/// both: accel::copy_between_devices sends `hold` to the source device and `meet`, the copy and `release` to the
/// destination, and nobody waits on the calling thread. `meeting` names a meeting this process opened
/// (src/device/order_meeting.hpp; user code has no need to send this). The device's thread waits at `hold` and
/// `meet`, answering `cancelled` when the other side's part is answered without arriving (its device closed).
/// Refused: an unknown meeting (invalid_argument), an isolated device (not_supported: its order lies in a worker).
struct JoinOrders {
  static constexpr const char* kName = "JoinOrders";
  using Response = Done;
  std::uint64_t meeting = 0;       ///< the meeting's number in this process
  JoinRole role = JoinRole::hold;  ///< this device's part
};

/// What ShareMemory answers.
struct SharedMemory {
  BufferHandle buffer;  ///< the buffer exported, or the new buffer over adopted memory; null for a stream query
  std::uint64_t address =
      0;  ///< the buffer's first byte in this process (host memory on the CPU, device memory on CUDA)
  std::uint64_t stream = 0;  ///< the answering stream as a cudaStream_t's bits; 0 on the CPU device
};

/// A buffer's memory shared with another library of this process without a copy (DLPack, the CUDA array interface):
///   export   `buffer` set: answers its address. When `order_consumer` is set (CUDA), the consumer's stream
///            `consumer_stream` (a cudaStream_t's bits: 1 the legacy default stream, 2 the per-thread one) waits on
///            the GPU, by an event, for every request on the buffer sent before this one; the host waits for nothing.
///   adopt    `buffer` null, `address` set: answers a new buffer over `count` elements of `dtype` at `address`, memory
///            the caller owns and keeps alive until the buffer is freed. Freeing the buffer forgets the memory; a CUDA
///            device's stream first finishes its work on it (the owner frees it next).
///   query    neither: answers the stream, for a producer that orders its work before this stream.
/// An isolated device refuses it (not_supported): its memory lies in another process.
struct ShareMemory {
  static constexpr const char* kName = "ShareMemory";
  using Response = SharedMemory;
  BufferHandle buffer;                ///< export: the buffer
  std::uint64_t address = 0;          ///< adopt: the memory's first byte
  DType dtype = DType::f32;           ///< adopt: the element type
  std::uint64_t count = 0;            ///< adopt: elements; 0 is refused
  std::uint64_t consumer_stream = 0;  ///< export: the stream to order after the buffer's work
  bool order_consumer = false;        ///< export: whether to order `consumer_stream`
};

/// Makes the device fail for real, so that fault handling can be tested:
///   illegal_address  a kernel writes to an address no allocation owns. On a CUDA device this is a sticky error:
///                    an in-process device is poisoned for the rest of the process; an isolated device replaces
///                    its worker. The CPU device refuses it (not_supported).
///   worker_crash     the worker process of an isolated device aborts;
///   worker_hang      the worker process of an isolated device stops serving (its heartbeat stops).
/// The last two need an isolated device; an in-process device refuses them (not_supported).
enum class FaultKind : std::uint8_t { illegal_address, worker_crash, worker_hang };
/// The enumerator's name, for messages and descriptions.
[[nodiscard]] std::string_view to_string(FaultKind kind) noexcept;

/// Makes the device fail in the way `kind` says, to test fault handling.
struct InjectFault {
  static constexpr const char* kName = "InjectFault";
  using Response = Done;
  FaultKind kind = FaultKind::illegal_address;  ///< the fault to inject
};

}  // namespace accel

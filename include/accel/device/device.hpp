/// @file
/// accel::Device — a stable address of one device (the CPU, or a CUDA GPU) and its typed front door.
///
/// @code
///   accel::System system;
///   accel::Device dev = *accel::Device::open_default(system);   // CUDA 0 when usable, else the CPU
///   accel::Buffer<float> x = *dev.allocate<float>(1024).wait();
///   dev.upload(std::span<const float>(host), x).wait();
/// @endcode
///
/// A Device is a cheap, copyable value over the device's context actor. Every method is a request through the
/// actor's mailbox and returns a Future; requests sent to one device run in the order they were sent, so a
/// buffer written by one request is read correctly by the next without waiting in between. A CUDA device's
/// future is ready when the GPU work has finished, and carries the work's real status.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "accel/core/actor.hpp"
#include "accel/core/system.hpp"
#include "accel/device/buffer.hpp"
#include "accel/device/protocol.hpp"
#include "accel/device/requests.hpp"
#include "accel/dnn/options.hpp"
#include "accel/graph/options.hpp"
#include "accel/jit/options.hpp"
#include "accel/libs/blas/options.hpp"

namespace accel {

/// Where the device's context lives (see docs/ARCHITECTURE.md, "Isolated devices"):
///   in_process      in this process. A sticky CUDA fault ends the device for the life of the process.
///   worker_process  in a worker process the library starts and supervises. Requests and replies cross shared
///                   memory; host data moves through a shared staging region. A sticky fault, a crash, a kill or
///                   a hang of the worker replaces it: requests it was running are answered `context_lost`,
///                   requests queued behind them run on the new worker, and every older buffer handle is stale.
enum class Isolation : std::uint8_t { in_process, worker_process };
/// The enumerator's name, for messages.
[[nodiscard]] std::string_view to_string(Isolation isolation) noexcept;

/// How an isolated device's worker process runs and is replaced.
struct WorkerOptions {
  /// The worker program. Empty: $ACCEL_WORKER, else `accel-worker` beside the running program, else the one
  /// this build made.
  std::string executable;
  /// Host data of copies crosses this shared region (pinned by a CUDA worker); larger copies go in pieces.
  std::uint64_t staging_bytes = 64ull << 20;
  /// How long each side of the channel spins for the next message before it sleeps.
  std::chrono::microseconds spin{100};
  /// A worker whose serving loop has not made progress for this long is hung: it is killed and replaced. The
  /// supervisor wakes when the heartbeat goes stale, so a hang is found within this timeout plus about a
  /// millisecond; the requests the worker held are answered once it has exited (10-20 ms for a CPU worker on
  /// the test machine; a CUDA worker's exit also tears down its context). The serving loop stamps the
  /// heartbeat at least every eighth of the timeout, and a CPU worker's is stamped while the process uses
  /// processor time, so a request computing for longer (one large GEMM, say) is not taken for a hang.
  std::chrono::milliseconds heartbeat_timeout{5'000};
  /// How long a new worker may take to build its context.
  std::chrono::milliseconds start_timeout{60'000};
  /// Keep a second worker with its context built, waiting: a lost worker is then replaced by promoting it
  /// (milliseconds) instead of starting a process and a CUDA context (hundreds of milliseconds). Costs a second
  /// context's memory on the GPU.
  bool standby = false;
  /// Replacements allowed (with back-off) before the device gives up and fails every request `unavailable`.
  RestartBudget restarts{.max_restarts = 20,
                         .window = std::chrono::milliseconds{60'000},
                         .initial_backoff = std::chrono::milliseconds{0},
                         .max_backoff = std::chrono::milliseconds{1'000}};
};

/// What Device::open opens and how: kind, ordinal, isolation, limits, mailbox, supervision and the families' options.
struct DeviceOptions {
  DeviceKind kind = DeviceKind::cpu;            ///< CPU or CUDA
  int ordinal = 0;                              ///< which device of that kind (the CPU has only 0)
  Isolation isolation = Isolation::in_process;  ///< in this process, or in a supervised worker process
  WorkerOptions worker{};                       ///< worker_process only
  /// Allocations beyond this many bytes in use fail with `resource_exhausted`; 0 means the hardware's limit.
  std::uint64_t memory_limit_bytes = 0;
  MailboxOptions mailbox{};         ///< the device actor's mailbox
  SupervisionPolicy supervision{};  ///< how the device actor's failures are answered
  /// CUDA only.
  CompletionStrategy completion = CompletionStrategy::poller;
  std::uint64_t pinned_staging_cache_bytes = 1ull << 30;  ///< pinned host blocks kept for reuse

  /// The library families' options, each in its family's header.
  blas::Options blas{};
  dnn::Options dnn{};      ///< the DNN family's options
  jit::Options jit{};      ///< the JIT family's options
  graph::Options graph{};  ///< the graph family's options
};

namespace detail {
/// The device's actors, its shared state and whether it was closed: the library's own (src/device/device_core.hpp).
class DeviceCore;
}  // namespace detail

/// A cheap, copyable address of one opened device; every method is a request and returns a Future.
class Device {
 public:
  /// Opens a device of the given kind; errors if it does not exist or its context cannot be created.
  static Result<Device> open(System& system, DeviceOptions options = {});
  /// A CUDA device (ordinal 0) when this build has the CUDA tier and a GPU is usable; otherwise the CPU.
  static Result<Device> open_default(System& system, DeviceOptions options = {});
  /// The kind open_default opens: cuda when this build has the CUDA tier and a GPU is usable, else cpu.
  [[nodiscard]] static DeviceKind default_kind();
  /// How many devices of `kind` this process can open in process: 1 CPU; the usable CUDA GPUs (0 in a build without
  /// the CUDA tier). The first call for CUDA initialises its driver in this process (cuInit, ~100 ms on the H100).
  [[nodiscard]] static int count(DeviceKind kind);

  /// CPU or CUDA.
  [[nodiscard]] DeviceKind kind() const noexcept;
  /// In this process, or in a supervised worker process.
  [[nodiscard]] Isolation isolation() const noexcept;
  /// The device's name, e.g. "cuda:0".
  [[nodiscard]] const std::string& name() const noexcept;
  /// The opened device's unique id in this process, which its buffer handles carry.
  [[nodiscard]] std::uint32_t id() const noexcept;
  /// The device's actor, for requests sent to it directly.
  [[nodiscard]] const ActorRef<DeviceProtocol>& actor() const noexcept;

  /// Another address of the same device with its own actor and CUDA stream. Buffers are shared: a buffer
  /// written through one stream and read through another is ordered by the device (the reader's stream waits
  /// for the writer's event), without a host synchronisation, once the writer's actor has taken the write; a
  /// fence (record_fence / wait_fence) orders everything after a point of one stream before another's next
  /// requests. The CPU device has no streams (not_supported). A closed device answers `failed_precondition` and a
  /// failed one its health() error, on every kind, before the question of streams arises.
  [[nodiscard]] Result<Device> open_stream() const;

  /// OK while the device can serve; once a sticky fault poisoned it, the error that did, for good; once it was
  /// closed, `failed_precondition`.
  [[nodiscard]] Status health() const;

  /// Closes the device for every holder of it: its actor and the streams opened from it stop (the requests they
  /// have queued are answered `cancelled`), an isolated device's worker process is stopped and reaped, and an
  /// in-process CUDA device gives its memory pool back to the GPU. Later requests, open_stream() and health()
  /// answer `failed_precondition`. Buffers may outlive it: releasing them then does nothing. The future is
  /// ready when all of that is done, which happens on a thread of the System's, so close() may be called
  /// anywhere; but waiting for it in a continuation that one of the device's threads runs would wait for that
  /// thread itself. Closing again answers when the first close is done. Dropping the last copy of a Device and
  /// of every stream opened from it closes the device as well (nobody waits for it then).
  Future<Done> close() const;

  /// Any request of the device protocol. An isolated device's requests go from the caller's thread straight into
  /// its worker's channel (waiting only while the channel is full), in the order they were sent.
  template <class Request>
  requires DeviceProtocol::accepts<Request> Future<response_t<Request>> ask(Request request)
  const {
    if (closed()) return make_ready_future<response_t<Request>>(closed_error());
    DeviceProtocol::Handler* direct = direct_handler();
    if (direct == nullptr) return actor().ask(std::move(request));
    Promise<response_t<Request>> reply;
    Future<response_t<Request>> future = reply.future();
    Status sent = static_cast<Handles<Request>&>(*direct).dispatch(request, reply);
    if (!sent.ok()) reply.set(std::move(sent));
    return future;
  }

  /// Allocates `count` elements of T; the Buffer frees them when its last copy goes.
  template <class T>
  Future<Buffer<T>> allocate(std::uint64_t count) const {
    std::weak_ptr<detail::BufferReleaser> releaser = buffer_releaser();
    return ask(Allocate{.dtype = dtype_of<T>(), .count = count}).then([releaser](BufferHandle handle) {
      return Buffer<T>(std::make_shared<const detail::BufferOwner>(handle, releaser));
    });
  }

  /// Exports `buffer` to the other processes of the host (accel/device/process_sharing.hpp).
  Future<ExportedBuffer> export_buffer(BufferHandle buffer) const { return ask(ExportBuffer{.buffer = buffer}); }

  /// A buffer over the memory another process exported (accel/device/process_sharing.hpp); dropping its last copy
  /// lets go of the memory. `invalid_argument` when the export holds elements other than T.
  template <class T>
  Future<Buffer<T>> import_buffer(const ExportedBuffer& exported) const {
    if (exported.dtype != dtype_of<T>())
      return make_ready_future<Buffer<T>>(import_dtype_error(exported, dtype_of<T>()));
    std::weak_ptr<detail::BufferReleaser> releaser = buffer_releaser();
    return ask(ImportBuffer{.exported = exported}).then([releaser](BufferHandle handle) {
      return Buffer<T>(std::make_shared<const detail::BufferOwner>(handle, releaser));
    });
  }

  /// Copies host memory into `destination`, starting `offset` elements in.
  template <class T>
  Future<Done> upload(std::span<const T> source, const Buffer<T>& destination, std::uint64_t offset = 0) const {
    return ask(
        CopyToDevice{.source = HostSource::of(source), .destination = destination, .destination_offset = offset});
  }

  /// Copies `source`, from `offset` elements in, into host memory.
  template <class T>
  Future<Done> download(const Buffer<T>& source, std::span<T> destination, std::uint64_t offset = 0) const {
    return ask(CopyToHost{.source = source, .source_offset = offset, .destination = HostDestination::of(destination)});
  }

  /// Frees the buffer for every holder of it at once; their next use is `stale_handle`.
  Future<Done> free(BufferHandle buffer) const { return ask(Free{.buffer = buffer}); }
  /// Runs a GEMM request.
  Future<Done> gemm(Gemm gemm) const { return ask(std::move(gemm)); }
  /// The device's DeviceInfo: kind, memory, libraries and caches.
  Future<DeviceInfo> info() const { return ask(QueryDevice{}); }
  /// Frees every buffer and starts a new context epoch; every handle of the device becomes stale.
  Future<Done> reset() const { return ask(ResetContext{}); }
  /// Ordering across streams without waiting for the first stream's work (see RecordFence and WaitFence):
  /// @code
  ///   Fence a_done = *stream_a.record_fence().wait();  // answered at once, A's work still running
  ///   stream_b.wait_fence(a_done);                      // what B is sent next runs after A, ordered on the GPU
  /// @endcode
  Future<Fence> record_fence() const { return ask(RecordFence{}); }
  /// Orders what this stream is sent next after `fence` (see WaitFence).
  Future<Done> wait_fence(Fence fence) const { return ask(WaitFence{.fence = fence}); }
  /// Makes the device fail for real, to test fault handling (see FaultKind).
  Future<Done> inject_fault(FaultKind kind = FaultKind::illegal_address) const { return ask(InjectFault{kind}); }

  /// Whether both address the same device and stream.
  friend bool operator==(const Device& a, const Device& b) noexcept { return a.core_ == b.core_; }

 private:
  explicit Device(std::shared_ptr<detail::DeviceCore> core) : core_(std::move(core)) {}
  /// What the templates above need of the device, out of line so that its internals stay in the library.
  [[nodiscard]] bool closed() const noexcept;
  [[nodiscard]] Status closed_error() const;
  /// Set where requests may skip the actor's mailbox: a stream whose dispatch is safe from any thread.
  [[nodiscard]] DeviceProtocol::Handler* direct_handler() const noexcept;
  [[nodiscard]] std::weak_ptr<detail::BufferReleaser> buffer_releaser() const noexcept;
  [[nodiscard]] static Status import_dtype_error(const ExportedBuffer& exported, DType wanted);

  std::shared_ptr<detail::DeviceCore> core_;
};

}  // namespace accel

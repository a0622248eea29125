#include "device/isolated/isolated_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "accel/core/waiting.hpp"
#include "device/isolated/wire.hpp"
#include "device/isolated/worker_supervisor.hpp"
#include "device/operation_handlers.hpp"

namespace accel::device {
namespace {

using isolated::PendingReply;
using isolated::ReplyContext;
using isolated::StagingRange;
using isolated::WorkerSupervisor;

template <class T>
class ReplyTo final : public PendingReply {
 public:
  explicit ReplyTo(Promise<T> promise) : promise_(std::move(promise)) {}
  void complete(std::span<const std::byte> reply, const ReplyContext& context) override {
    Result<T> result = isolated::decode_reply<T>(reply);
    if constexpr (std::is_same_v<T, DeviceInfo>) {
      if (result.ok()) {
        result->worker_pid = context.worker_pid;
        result->worker_restarts = context.worker_restarts;
      }
    }
    promise_.set(std::move(result));
  }
  void fail(const Status& status) override { promise_.set(status); }

 private:
  Promise<T> promise_;
};

// One copy may cross the staging region in several pieces (a staged request in one); its
// future is ready when every piece has been answered, with the first error if any piece failed.
class CopyJoin {
 public:
  CopyJoin(Promise<Done> promise, std::uint64_t pieces) : promise_(std::move(promise)), remaining_(pieces) {}
  void pieces_done(std::uint64_t pieces, const Status& status) {
    std::lock_guard lock(mutex_);
    if (first_error_.ok() && !status.ok()) first_error_ = status;
    remaining_ -= pieces;
    if (remaining_ != 0) return;
    if (first_error_.ok()) {
      promise_.set(Done{});
    } else {
      promise_.set(first_error_);
    }
  }

 private:
  std::mutex mutex_;
  Promise<Done> promise_;
  std::uint64_t remaining_;
  Status first_error_;
};

class CopyPiece final : public PendingReply {
 public:
  CopyPiece(std::shared_ptr<CopyJoin> join, WorkerSupervisor& supervisor, StagingRange range, void* host_destination,
            std::uint64_t bytes)
      : join_(std::move(join)),
        supervisor_(&supervisor),
        range_(range),
        host_destination_(host_destination),
        bytes_(bytes) {}
  void complete(std::span<const std::byte> reply, const ReplyContext& context) override {
    Status status = isolated::decode_reply<Done>(reply).status();
    if (status.ok() && host_destination_ != nullptr && bytes_ != 0) {
      std::memcpy(host_destination_, context.staging.data() + range_.offset, bytes_);
    }
    finish(status);
  }
  void fail(const Status& status) override { finish(status); }

 private:
  void finish(const Status& status) {
    supervisor_->release_staging(range_);
    join_->pieces_done(1, status);
  }
  std::shared_ptr<CopyJoin> join_;
  WorkerSupervisor* supervisor_;
  StagingRange range_;
  void* host_destination_;
  std::uint64_t bytes_;
};

const void* as_staging_address(std::uint64_t offset) { return reinterpret_cast<const void*>(offset); }

// The proxy for one stream of the worker. Its dispatch only writes into the channel (under the supervisor's
// locks), so it serves both as a client-side actor's state and, for Device::ask, from callers' threads.
class IsolatedStream;
using IsolatedStreamBase = OperationHandlers<IsolatedStream, DeviceProtocol::Handler, LibraryRequests>;

class IsolatedStream final : public IsolatedStreamBase {
 public:
  IsolatedStream(std::shared_ptr<WorkerSupervisor> supervisor)
      : supervisor_(std::move(supervisor)), stream_(supervisor_->open_stream()) {}
  ~IsolatedStream() override { supervisor_->close_stream(stream_); }
  IsolatedStream(const IsolatedStream&) = delete;
  IsolatedStream& operator=(const IsolatedStream&) = delete;

  Status dispatch(Allocate& request, Promise<BufferHandle>& reply) override { return forward(request, reply); }
  Status dispatch(Free& request, Promise<Done>& reply) override { return forward(request, reply); }
  Status dispatch(CopyOnDevice& request, Promise<Done>& reply) override { return forward(request, reply); }
  Status dispatch(QueryDevice& request, Promise<DeviceInfo>& reply) override { return forward(request, reply); }
  Status dispatch(ResetContext& request, Promise<Done>& reply) override { return forward(request, reply); }
  Status dispatch(RecordFence& request, Promise<Fence>& reply) override { return forward(request, reply); }
  Status dispatch(WaitFence& request, Promise<Done>& reply) override { return forward(request, reply); }
  Status dispatch(InjectFault& request, Promise<Done>& reply) override { return forward(request, reply); }
  // The steps go through the staging region; the worker's device checks and runs them (a CUDA worker captures them).
  // Host copies are refused here, before anything crosses (recorded_codec.hpp).
  Status dispatch(RunRecorded& request, Promise<Done>& reply) override {
    if (Status refused = isolated::refuse_host_copies(request); !refused.ok()) {
      reply.set(std::move(refused));
      return Status();
    }
    return stage(request, reply);
  }
  // The worker exports and imports, in its process: buffers shared between processes are its memory.
  Status dispatch(ExportBuffer& request, Promise<ExportedBuffer>& reply) override { return forward(request, reply); }
  Status dispatch(ImportBuffer& request, Promise<BufferHandle>& reply) override { return forward(request, reply); }
  // Its memory lies in the worker process: nothing to share with a library of this one.
  Status dispatch(ShareMemory&, Promise<SharedMemory>& reply) override {
    reply.set(not_supported("ShareMemory: an isolated device's memory lies in its worker process; copy instead"));
    return Status();
  }
  // Its order is the worker's: no thread of this process can hold it.
  Status dispatch(JoinOrders&, Promise<Done>& reply) override {
    reply.set(not_supported("JoinOrders: an isolated device's order lies in its worker process"));
    return Status();
  }

  // -- library requests: plain data crosses byte for byte, the rest through the staging region, checked here
  // first (the encoding needs a well-formed request) and again by the worker.
  template <class Request>
  Status dispatch_operation(Request& request, Promise<Done>& reply) {
    if constexpr (isolated::kStaged<Request>) {
      if (Status valid = Operation<Request>::validate(request).status(); !valid.ok()) {
        reply.set(std::move(valid));
        return Status();
      }
      return stage(request, reply);
    } else {
      return forward(request, reply);
    }
  }
  template <class Request>
  Result<Done> handle_operation(Request&) {
    return not_dispatched();
  }

  Status dispatch(CopyToDevice& request, Promise<Done>& reply) override {
    const HostSource source = request.source;
    if (source.data == nullptr && source.count != 0) {
      reply.set(invalid_argument("CopyToDevice: null host source"));
      return Status();
    }
    copy_in_pieces(source.count, size_of(source.dtype), reply,
                   [&](std::uint64_t first, std::uint64_t count, StagingRange range, std::uint64_t bytes) {
                     std::memcpy(supervisor_->staging_memory().data() + range.offset,
                                 static_cast<const std::byte*>(source.data) + first * size_of(source.dtype), bytes);
                     CopyToDevice piece = request;
                     piece.source.data = as_staging_address(range.offset);
                     piece.source.count = count;
                     piece.destination_offset += first;
                     return std::pair{piece, static_cast<void*>(nullptr)};
                   });
    return Status();
  }

  Status dispatch(CopyToHost& request, Promise<Done>& reply) override {
    const HostDestination destination = request.destination;
    if (destination.data == nullptr && destination.count != 0) {
      reply.set(invalid_argument("CopyToHost: null host destination"));
      return Status();
    }
    copy_in_pieces(destination.count, size_of(destination.dtype), reply,
                   [&](std::uint64_t first, std::uint64_t count, StagingRange range, std::uint64_t) {
                     CopyToHost piece = request;
                     piece.destination.data = const_cast<void*>(as_staging_address(range.offset));
                     piece.destination.count = count;
                     piece.source_offset += first;
                     return std::pair{piece, static_cast<void*>(static_cast<std::byte*>(destination.data) +
                                                                first * size_of(destination.dtype))};
                   });
    return Status();
  }

  // Every request is answered through dispatch(); these synchronous forms are never called.
  Result<BufferHandle> handle(Allocate&) override { return not_dispatched(); }
  Result<Done> handle(Free&) override { return not_dispatched(); }
  Result<Done> handle(CopyToDevice&) override { return not_dispatched(); }
  Result<Done> handle(CopyToHost&) override { return not_dispatched(); }
  Result<Done> handle(CopyOnDevice&) override { return not_dispatched(); }
  Result<DeviceInfo> handle(QueryDevice&) override { return not_dispatched(); }
  Result<Done> handle(ResetContext&) override { return not_dispatched(); }
  Result<Fence> handle(RecordFence&) override { return not_dispatched(); }
  Result<Done> handle(WaitFence&) override { return not_dispatched(); }
  Result<Done> handle(InjectFault&) override { return not_dispatched(); }
  Result<Done> handle(RunRecorded&) override { return not_dispatched(); }
  Result<SharedMemory> handle(ShareMemory&) override { return not_dispatched(); }
  Result<ExportedBuffer> handle(ExportBuffer&) override { return not_dispatched(); }
  Result<BufferHandle> handle(ImportBuffer&) override { return not_dispatched(); }
  Result<Done> handle(JoinOrders&) override { return not_dispatched(); }

 private:
  static Status not_dispatched() { return internal_error("an isolated device answers every request from dispatch()"); }

  template <class Request>
  Status forward(const Request& request, Promise<response_t<Request>>& reply) {
    static_assert(std::is_trivially_copyable_v<Request>, "requests cross the channel byte for byte");
    static_assert(isolated::Ring::kSequenceBytes + sizeof(isolated::MessageHeader) + sizeof(Request) <=
                      isolated::kRequestSlotBytes,
                  "the request does not fit a channel slot");
    supervisor_->send(stream_, isolated::kTag<Request>, std::as_bytes(std::span(&request, 1)),
                      std::make_unique<ReplyTo<response_t<Request>>>(std::move(reply)));
    return Status();
  }

  // A request that is not plain data: its encoding goes through the staging region (isolated/staged_requests.hpp).
  template <class Request>
  Status stage(const Request& request, Promise<Done>& reply) {
    std::vector<std::byte> encoding;
    const std::optional<std::size_t> known = isolated::staged_bytes(request);
    if (!known) encoding = isolated::encode_staged(request);
    const std::size_t bytes = known ? *known : encoding.size();
    const std::optional<StagingRange> range = supervisor_->allocate_staging(bytes);
    if (!range) {
      reply.set(supervisor_->health());
      return Status();
    }
    const std::span<std::byte> staged = supervisor_->staging_memory().subspan(range->offset, bytes);
    if (known) {
      // Straight into the staging region: no encoding to grow and copy again (a recording's launch).
      ByteWriter out(staged);
      isolated::encode_staged(out, request);
      if (out.overflowed() || out.size() != bytes) {
        supervisor_->release_staging(*range);
        reply.set(internal_error(fmt::format("the staged encoding of a {} request took {} bytes, not the {} foreseen",
                                             Request::kName, out.size(), bytes)));
        return Status();
      }
    } else {
      std::memcpy(staged.data(), encoding.data(), bytes);
    }
    const isolated::Staged<Request> wire{.offset = range->offset, .bytes = bytes};
    auto join = std::make_shared<CopyJoin>(std::move(reply), 1);
    supervisor_->send(stream_, isolated::kTag<Request>, std::as_bytes(std::span(&wire, 1)),
                      std::make_unique<CopyPiece>(join, *supervisor_, *range, nullptr, 0));
    return Status();
  }

  // Splits a copy of `count` elements into pieces that fit the staging region; `make_piece(first, count,
  // range, bytes)` fills the staging range (uploads) and returns the piece's request and where its bytes go on
  // the host (downloads).
  template <class MakePiece>
  void copy_in_pieces(std::uint64_t count, std::size_t element, Promise<Done>& reply, MakePiece make_piece) {
    const std::uint64_t per_piece = std::max<std::uint64_t>(1, supervisor_->max_copy_bytes() / element);
    const std::uint64_t pieces = std::max<std::uint64_t>(1, (count + per_piece - 1) / per_piece);
    auto join = std::make_shared<CopyJoin>(std::move(reply), pieces);
    for (std::uint64_t piece = 0; piece < pieces; ++piece) {
      const std::uint64_t first = piece * per_piece;
      const std::uint64_t piece_count = std::min(per_piece, count - first);
      const std::uint64_t bytes = piece_count * element;
      std::optional<StagingRange> range = bytes == 0 ? StagingRange{} : supervisor_->allocate_staging(bytes);
      if (!range) {
        join->pieces_done(pieces - piece, supervisor_->health());
        return;
      }
      auto [request, host_destination] = make_piece(first, piece_count, *range, bytes);
      using Request = decltype(request);
      supervisor_->send(stream_, isolated::kTag<Request>, std::as_bytes(std::span(&request, 1)),
                        std::make_unique<CopyPiece>(join, *supervisor_, *range, host_destination, bytes));
    }
  }

  std::shared_ptr<WorkerSupervisor> supervisor_;
  std::uint32_t stream_;
};

class IsolatedBackend final : public DeviceBackend {
 public:
  IsolatedBackend(std::shared_ptr<WorkerSupervisor> supervisor, DeviceKind kind)
      : supervisor_(std::move(supervisor)), has_streams_(kind == DeviceKind::cuda) {
    if (kind == DeviceKind::cpu) core_claim_.emplace();
  }
  Result<std::unique_ptr<DeviceProtocol::Handler>> make_stream_state(std::shared_ptr<DeviceShared>) override {
    return std::make_unique<IsolatedStream>(supervisor_);
  }
  std::shared_ptr<DeviceProtocol::Handler> make_direct_stream() override {
    return std::make_shared<IsolatedStream>(supervisor_);
  }
  bool has_streams() const noexcept override { return has_streams_; }
  Status health() const override { return supervisor_->health(); }
  void close() override { supervisor_->close(); }

 private:
  std::shared_ptr<WorkerSupervisor> supervisor_;
  bool has_streams_;
  // A CPU device's worker uses every core of this machine while it computes, as an in-process one does: this
  // process's waiters sleep rather than yield meanwhile (core/waiting.hpp).
  std::optional<detail::CoreClaim> core_claim_;
};

}  // namespace

Result<std::shared_ptr<DeviceBackend>> open_isolated_backend(const DeviceShared& shared) {
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<WorkerSupervisor> supervisor, WorkerSupervisor::start(shared));
  return std::shared_ptr<DeviceBackend>(std::make_shared<IsolatedBackend>(std::move(supervisor), shared.options.kind));
}

}  // namespace accel::device

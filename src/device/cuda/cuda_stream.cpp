#include "device/cuda/cuda_stream.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "device/cuda/fault_kernel.hpp"
#include "device/order_meeting.hpp"
#include "operation/cuda_status.hpp"

namespace accel::device::cuda {

std::vector<CudaStream::Use> uses_of(const Operands& operands) {
  std::vector<CudaStream::Use> uses;
  uses.reserve(operands.size());
  for (const Operand& operand : operands.list()) {
    if (operand.buffer.is_null()) continue;
    bool merged = false;
    for (CudaStream::Use& use : uses) {
      if (use.buffer == operand.buffer) {
        if (operand.access == Access::write) use.access = Access::write;
        merged = true;
        break;
      }
    }
    if (!merged) uses.push_back({operand.buffer, operand.access});
  }
  return uses;
}

Status CudaStream::order_before_work(std::span<const Use> uses, std::uint64_t write_version) {
  for (const Use& use : uses) {
    ACCEL_RETURN_IF_ERROR(context_->order_before(stream_, use.buffer, use.access));
    // Given before the work runs, whatever its outcome: work that fails part way may have written some of its
    // outputs. (A version given to a buffer whose work is then refused only makes its readers think it new.)
    if (use.access == Access::write) context_->set_version(use.buffer, write_version);
  }
  return Status();
}

void CudaStream::order_after_work(std::span<const Use> uses, const EventRef& mark) {
  for (const Use& use : uses) context_->order_after(stream_, use.buffer, use.access, mark);
}

Result<std::vector<BufferView>> CudaStream::resolve_locked(const Operands& operands) {
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(std::vector<BufferView> views, context_->table().resolve(operands));
  context_->stamp_versions(operands, views);
  return views;
}

CudaStream::CudaStream(std::shared_ptr<DeviceShared> shared, std::shared_ptr<CudaContext> context)
    : shared_(std::move(shared)),
      context_(std::move(context)),
      id_(context_->next_stream_id()),
      watched_(context_->completions()) {}

Result<std::unique_ptr<CudaStream>> CudaStream::create(std::shared_ptr<DeviceShared> shared,
                                                       std::shared_ptr<CudaContext> context) {
  ACCEL_RETURN_IF_ERROR(context->check_healthy());
  std::unique_ptr<CudaStream> stream(new CudaStream(std::move(shared), std::move(context)));
  CudaContext& ctx = *stream->context_;
  ACCEL_RETURN_IF_ERROR(ctx.check(cudaSetDevice(ctx.ordinal()), "cudaSetDevice"));
  ACCEL_RETURN_IF_ERROR(
      ctx.check(cudaStreamCreateWithFlags(&stream->stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
  stream->done_word_ = ctx.lease_done_word();
  return stream;
}

CudaStream::~CudaStream() {
  (void)answer_held();  // the replies and the mark go before the stream does
  watched_.hand_over();
  if (stream_ == nullptr || context_->check_healthy().code() == Code::context_lost) {
    states_.abandon();  // the driver refuses to free anything of a poisoned context
    recorded_.abandon();
    return;
  }
  recorded_.clear();
  states_.clear();
  if (scratch_ != nullptr) cudaFreeAsync(scratch_, stream_);
  cudaStreamSynchronize(stream_);
  cudaStreamDestroy(stream_);
}

Result<Done> CudaStream::wait_for(Result<Submitted> submitted) {
  ACCEL_ASSIGN_OR_RETURN(Submitted work, std::move(submitted));
  ACCEL_RETURN_IF_ERROR(answer_held());  // records the mark `work` may share
  return context_->completions().wait(std::move(work));
}

Result<EventRef> CudaStream::completion_mark() {
  if (context_->completions().strategy() != CompletionStrategy::poller) return context_->record_event(stream_);
  // A mark another stream has recorded no longer covers work enqueued from now on.
  if (open_mark_ == nullptr || open_mark_->is_recorded()) {
    ACCEL_ASSIGN_OR_RETURN(open_mark_, context_->mark_event(stream_));
  }
  return open_mark_;
}

Status CudaStream::answer_held(Watch watch) {
  Status recorded;
  if (open_mark_ != nullptr) {
    std::lock_guard lock(context_->buffers_mutex());
    recorded = context_->recorded(*open_mark_).status();
    open_mark_.reset();
  }
  if (held_.empty()) return recorded;
  if (!recorded.ok()) {
    for (DeferredReply& held : held_) held.reply.set(recorded);
    held_.clear();
    return recorded;
  }
  // After all of the burst's work, the mark's included (another stream may have recorded it earlier).
  if (const DoneWord done = done_word_.write_after(stream_)) {
    for (DeferredReply& held : held_) held.work.done = done;
  }
  if (watch == Watch::here && context_->completions().strategy() == CompletionStrategy::poller) {
    watched_.add(stream_, held_);
  } else {
    recorded = context_->completions().defer(stream_, held_);
  }
  held_.clear();
  return recorded;
}

void CudaStream::collect_released() {
  std::vector<BufferHandle> released = shared_->take_released();
  if (released.empty()) return;
  std::lock_guard lock(context_->buffers_mutex());
  for (const BufferHandle& handle : released) (void)free_locked(handle);
}

// -- memory --------------------------------------------------------------------------------------------

Result<BufferHandle> CudaStream::handle(Allocate& request) {
  collect_released();
  if (request.count == 0) return invalid_argument("Allocate of 0 elements");
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t bytes, checked_bytes(request.dtype, request.count));
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  MemoryStats& stats = context_->stats();
  ACCEL_RETURN_IF_ERROR(check_memory_limit(shared_->name, bytes, shared_->options.memory_limit_bytes, stats));
  void* data = nullptr;
  if (cudaError_t error = cudaMallocFromPoolAsync(&data, bytes, context_->pool(), stream_); error != cudaSuccess) {
    ++stats.failed_allocations;
    return context_->check(
        error, fmt::format("allocating {} bytes ({} in use by this device's buffers)", bytes, stats.in_use_bytes));
  }
  const BufferHandle handle = context_->table().insert(data, request.dtype, request.count);
  // The memory is ready in this stream's order; other streams wait for this event before touching it.
  Result<EventRef> allocated = context_->record_event(stream_);
  if (!allocated.ok()) {
    (void)context_->table().remove(handle);
    cudaFreeAsync(data, stream_);
    return allocated.status();
  }
  context_->order_after(stream_, handle, Access::write, *allocated);
  context_->set_version(handle, context_->new_write_version());
  stats.in_use_bytes += bytes;
  stats.peak_bytes = std::max(stats.peak_bytes, stats.in_use_bytes);
  ++stats.live_buffers;
  ++stats.allocations;
  return handle;
}

Status CudaStream::free_locked(const BufferHandle& handle) {
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(const BufferView view, context_->table().remove(handle));
  ACCEL_RETURN_IF_ERROR(context_->order_all_before_free(stream_, handle));
  MemoryStats& stats = context_->stats();
  if (view.data == nullptr) {  // memory another library or process owns, or an export: let go once this returns
    --stats.live_buffers;
    ACCEL_RETURN_IF_ERROR(
        context_->check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (before giving memory back)"));
    context_->release_shared(handle);
    return Status();
  }
  ACCEL_RETURN_IF_ERROR(context_->check(cudaFreeAsync(view.data, stream_), "cudaFreeAsync"));
  stats.in_use_bytes -= view.bytes();
  --stats.live_buffers;
  ++stats.frees;
  return Status();
}

Result<Done> CudaStream::handle(Free& request) {
  collect_released();
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(free_locked(request.buffer));
  return Done{};
}

Result<Done> CudaStream::handle(ResetContext&) {
  shared_->take_released();
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_RETURN_IF_ERROR(context_->reset_buffers(stream_, shared_->next_epoch()));
  return Done{};
}

Result<ExportedBuffer> CudaStream::handle(ExportBuffer& request) {
  collect_released();
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  return context_->export_buffer(stream_, request.buffer);
}

Result<BufferHandle> CudaStream::handle(ImportBuffer& request) {
  collect_released();
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  return context_->import_buffer(request.exported);
}

Result<SharedMemory> CudaStream::handle(ShareMemory& request) {
  collect_released();
  const SharedMemory query{.stream = reinterpret_cast<std::uintptr_t>(stream_)};
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  if (!request.buffer.is_null()) {
    ACCEL_ASSIGN_OR_RETURN(const BufferView view, context_->table().resolve(request.buffer, "buffer"));
    // This stream follows the buffer's users (as a write would: the consumer may write), and later requests on the
    // buffer follow the export's event. Shared from now on: no version vouches for it, its memory stays put.
    ACCEL_RETURN_IF_ERROR(context_->order_before(stream_, request.buffer, Access::write));
    ACCEL_ASSIGN_OR_RETURN(const EventRef exported, context_->record_event(stream_));
    context_->order_after(stream_, request.buffer, Access::write, exported);
    context_->table().mark_shared(request.buffer);
    if (request.order_consumer) {  // and the consumer's stream follows this one
      auto* consumer = reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(request.consumer_stream));
      ACCEL_ASSIGN_OR_RETURN(const cudaEvent_t export_point, context_->recorded(*exported));
      ACCEL_RETURN_IF_ERROR(
          context_->check(cudaStreamWaitEvent(consumer, export_point), "cudaStreamWaitEvent (the consumer's)"));
    }
    return SharedMemory{
        .buffer = request.buffer, .address = reinterpret_cast<std::uintptr_t>(view.data), .stream = query.stream};
  }
  if (request.address == 0) return query;
  if (request.count == 0) return invalid_argument("ShareMemory: adopting 0 elements");
  ACCEL_RETURN_IF_ERROR(checked_bytes(request.dtype, request.count).status());
  void* data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(request.address));
  const BufferHandle handle = context_->table().insert_external(data, request.dtype, request.count);
  context_->set_version(handle, context_->new_write_version());
  ++context_->stats().live_buffers;
  return SharedMemory{.buffer = handle, .address = request.address, .stream = query.stream};
}

Result<DeviceInfo> CudaStream::handle(QueryDevice&) {
  collect_released();
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  std::uint64_t reserved = 0;
  ACCEL_RETURN_IF_ERROR(
      context_->check(cudaMemPoolGetAttribute(context_->pool(), cudaMemPoolAttrReservedMemCurrent, &reserved),
                      "cudaMemPoolGetAttribute(reserved)"));
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  ACCEL_RETURN_IF_ERROR(context_->check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"));
  std::lock_guard lock(context_->buffers_mutex());
  MemoryStats memory = context_->stats();
  memory.reserved_bytes = reserved;
  DeviceInfo info{.kind = DeviceKind::cuda,
                  .ordinal = context_->ordinal(),
                  .device_id = shared_->id,
                  .epoch = context_->table().epoch(),
                  .name = fmt::format("{} ({})", shared_->name, context_->gpu_name()),
                  .memory_capacity_bytes = shared_->options.memory_limit_bytes != 0
                                               ? std::min(shared_->options.memory_limit_bytes, context_->total_memory())
                                               : context_->total_memory(),
                  .compute_capability = context_->compute_capability(),
                  .completion = context_->completions().strategy(),
                  .device_free_bytes = free_bytes,
                  .memory = memory};
  LibraryReport report;
  ForEachRequest<LibraryRequests>::apply([&]<class Request>() {
    if constexpr (requires { CudaOperation<Request>::describe(*this, report); })
      CudaOperation<Request>::describe(*this, report);
  });
  info.libraries = std::move(report.libraries);
  info.caches = std::move(report.caches);
  // Like the families' caches, reported once the stream has used it: asking a fresh device opens nothing.
  if (CacheStats recorded = recorded_.stats(); recorded.hits + recorded.misses + recorded.builds != 0)
    info.caches.push_back(std::move(recorded));
  return info;
}

// -- fences -----------------------------------------------------------------------------------------------

Result<Fence> CudaStream::handle(RecordFence&) {
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(EventRef event, context_->record_event(stream_));
  return context_->add_fence(id_, std::move(event));
}

Result<Done> CudaStream::handle(WaitFence& request) {
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_RETURN_IF_ERROR(context_->wait_fence(stream_, id_, request.fence));
  return Done{};
}

// Host-side only: the stream's thread waits at the meeting, holding no lock (the other device's copy takes this
// context's buffer lock).
Result<Done> CudaStream::handle(JoinOrders& request) {
  ACCEL_RETURN_IF_ERROR(answer_held());  // nobody waits for them while this thread waits at the meeting
  ACCEL_RETURN_IF_ERROR(join_orders(request));
  return Done{};
}

// -- the families' scratch memory ------------------------------------------------------------------------

// The workspace only grows; the old one is freed in stream order, after the work that used it.
Result<void*> CudaStream::workspace(std::uint64_t bytes) {
  if (bytes <= scratch_bytes_) return scratch_;
  if (scratch_ != nullptr) {
    ACCEL_RETURN_IF_ERROR(context_->check(cudaFreeAsync(scratch_, stream_), "cudaFreeAsync (workspace)"));
    scratch_ = nullptr;
    scratch_bytes_ = 0;
  }
  ACCEL_RETURN_IF_ERROR(context_->check(cudaMallocFromPoolAsync(&scratch_, bytes, context_->pool(), stream_),
                                        fmt::format("allocating a {}-byte workspace", bytes)));
  scratch_bytes_ = bytes;
  return scratch_;
}

// -- faults ---------------------------------------------------------------------------------------------

Result<Submitted> CudaStream::enqueue(InjectFault& request) {
  if (request.kind != FaultKind::illegal_address) {
    return not_supported(fmt::format("{}: FaultKind::{} needs an isolated device (Isolation::worker_process)",
                                     shared_->name, to_string(request.kind)));
  }
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  return ordered({}, [&]() -> Result<Submitted> {
    ACCEL_RETURN_IF_ERROR(context_->check(launch_illegal_write(stream_), "launching the faulting kernel"));
    return Submitted{};
  });
}

}  // namespace accel::device::cuda

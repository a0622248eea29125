#include "device/cuda/cuda_context.hpp"

#include <cuda.h>
#include <fmt/format.h>

#include <limits>

#include "device/cuda/cuda_stream.hpp"
#include "device/cuda/driver_function.hpp"
#include "device/cuda/peer_copy.hpp"
#include "operation/cuda_status.hpp"

namespace accel::device {

int cuda_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

Result<std::shared_ptr<DeviceBackend>> open_cuda_backend(DeviceShared& shared) {
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<cuda::CudaContext> context, cuda::CudaContext::open(shared));
  return std::shared_ptr<DeviceBackend>(std::move(context));
}

Status pin_host_memory(std::span<std::byte> memory) {
  if (cudaError_t error = cudaHostRegister(memory.data(), memory.size(), cudaHostRegisterPortable);
      error != cudaSuccess) {
    return cuda_status(error, fmt::format("cudaHostRegister of {} bytes of staging", memory.size()));
  }
  return Status();
}

}  // namespace accel::device

namespace accel::device::cuda {
namespace {

// Device::open (and a close by the last holder) runs on the caller's thread, which may be another library's: PyTorch
// keeps its current device in CUDA's, and opening cuda:1 must not move it off cuda:0. The caller's current context is
// put back through the driver (found by the runtime, so nothing links libcuda), since cudaSetDevice(previous) would
// make a context on a GPU the caller may never have used. A thread that had none keeps the device's: an isolated
// worker's main thread goes on to pin its staging region on it.
class KeepCallersContext {
 public:
  KeepCallersContext() {
    if (const Driver& driver = api(); driver.get != nullptr && driver.get(&previous_) != CUDA_SUCCESS)
      previous_ = nullptr;
  }
  KeepCallersContext(const KeepCallersContext&) = delete;
  KeepCallersContext& operator=(const KeepCallersContext&) = delete;
  ~KeepCallersContext() {
    if (previous_ != nullptr) api().set(previous_);
  }

 private:
  struct Driver {
    decltype(&cuCtxGetCurrent) get = nullptr;
    decltype(&cuCtxSetCurrent) set = nullptr;
  };
  static const Driver& api() {
    static const Driver driver = [] {
      Driver found{.get = driver_function<decltype(cuCtxGetCurrent)>("cuCtxGetCurrent"),
                   .set = driver_function<decltype(cuCtxSetCurrent)>("cuCtxSetCurrent")};
      if (found.get == nullptr || found.set == nullptr) found = Driver{};  // both or neither
      return found;
    }();
    return driver;
  }

  CUcontext previous_ = nullptr;
};

}  // namespace

CudaContext::CudaContext(DeviceShared& shared, std::shared_ptr<Health> health)
    : ordinal_(shared.options.ordinal),
      name_(shared.name),
      options_(shared.options),
      health_(std::move(health)),
      table_(shared.id, shared.next_epoch(), shared.name) {}

Result<std::shared_ptr<CudaContext>> CudaContext::open(DeviceShared& shared) {
  const int ordinal = shared.options.ordinal;
  int count = 0;
  if (cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    Status status = cuda_status(error, "cudaGetDeviceCount");
    return Status(Code::unavailable, fmt::format("{}: no usable CUDA GPU ({})", shared.name, status.message()),
                  Source::cuda, error);
  }
  if (ordinal < 0 || ordinal >= count) {
    return invalid_argument(
        fmt::format("{} does not exist: this machine has {} CUDA GPU{}", shared.name, count, count == 1 ? "" : "s"));
  }
  std::shared_ptr<Health> health = health_of(ordinal);
  ACCEL_RETURN_IF_ERROR(health->status());
  const KeepCallersContext keep;

  std::shared_ptr<CudaContext> context(new CudaContext(shared, health));
  ACCEL_RETURN_IF_ERROR(context->check(cudaSetDevice(ordinal), "cudaSetDevice"));
  ACCEL_RETURN_IF_ERROR(context->check(cudaFree(nullptr), "creating the CUDA context"));
  cudaDeviceProp properties{};
  ACCEL_RETURN_IF_ERROR(context->check(cudaGetDeviceProperties(&properties, ordinal), "cudaGetDeviceProperties"));
  context->compute_capability_ = properties.major * 10 + properties.minor;
  context->gpu_name_ = properties.name;
  context->total_memory_ = properties.totalGlobalMem;

  cudaMemPoolProps pool_properties{};
  pool_properties.allocType = cudaMemAllocationTypePinned;
  pool_properties.location.type = cudaMemLocationTypeDevice;
  pool_properties.location.id = ordinal;
  ACCEL_RETURN_IF_ERROR(context->check(cudaMemPoolCreate(&context->pool_, &pool_properties), "cudaMemPoolCreate"));
  // Keep freed memory in the pool: returning it to the driver at every synchronisation costs far more.
  std::uint64_t keep_everything = std::numeric_limits<std::uint64_t>::max();
  ACCEL_RETURN_IF_ERROR(
      context->check(cudaMemPoolSetAttribute(context->pool_, cudaMemPoolAttrReleaseThreshold, &keep_everything),
                     "cudaMemPoolSetAttribute(release threshold)"));

  context->events_ = std::make_shared<EventPool>();
  context->pinned_ = std::make_shared<PinnedPool>(shared.options.pinned_staging_cache_bytes);
  if (shared.options.completion == CompletionStrategy::poller) context->done_words_ = DoneWords::create();
  context->completions_ = std::make_unique<CompletionQueue>(shared.options.completion, health, shared.name);
  context->start_families(ordinal);
  register_peer_context(shared.id, context);
  return context;
}

// Each family's first-use work that may run ahead of need (start_with_context, operation/cuda_operation.hpp), begun
// off the opener's path: the open returns while it runs.
void CudaContext::start_families(int ordinal) {
  ForEachRequest<LibraryRequests>::apply([&]<class Request>() {
    if constexpr (requires { CudaOperation<Request>::start_with_context(ordinal); }) {
      if (std::jthread started = CudaOperation<Request>::start_with_context(ordinal); started.joinable())
        started_with_context_.push_back(std::move(started));
    }
  });
}

CudaContext::~CudaContext() { close(); }

// Once the streams are gone (their states hold the context), and again, doing nothing, when it is destroyed.
void CudaContext::close() {
  forget_peer_context(table_.device_id());  // no new copy to another GPU finds this context
  completions_.reset();                     // answers pending work first, while everything it uses still exists
  started_with_context_.clear();            // waits for the families' start-up work (its threads use no state of ours)
  {
    // A copy by another GPU that found this context before it was forgotten may hold it still.
    std::lock_guard lock(buffers_mutex_);
    const bool poisoned = health_->poisoned() || pool_ == nullptr;
    // Copies into other GPUs read these buffers on those GPUs' streams: they finish before the memory goes.
    if (!poisoned) {
      for (const BufferOrdering& ordering : ordering_)
        for (const StreamUse& read : ordering.reads_since)
          if (Result<cudaEvent_t> read_done = read.event->recorded(); read_done.ok())
            (void)cudaEventSynchronize(*read_done);
    }
    ordering_.clear();
    fences_.clear();
    if (poisoned) {  // nothing of a poisoned context can be freed; its exports are stale all the same
      retire_exports();
      return;
    }
    const KeepCallersContext keep;
    cudaSetDevice(ordinal_);
    table_.for_each_owned([](const BufferView& view) { cudaFree(view.data); });
    release_all_shared(/*closing=*/true);
    table_ = BufferTable(table_.device_id(), table_.epoch(), name_);
    cudaMemPoolDestroy(pool_);
    pool_ = nullptr;
  }
  states_.clear();
}

Result<std::unique_ptr<DeviceProtocol::Handler>> CudaContext::make_stream_state(std::shared_ptr<DeviceShared> shared) {
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<CudaStream> stream, CudaStream::create(std::move(shared), shared_from_this()));
  return std::unique_ptr<DeviceProtocol::Handler>(std::move(stream));
}

Status CudaContext::check(cudaError_t error, std::string_view what) {
  if (error == cudaSuccess) return Status();
  Status status = cuda_status(error, fmt::format("{}: {}", name_, what));
  if (status.code() == Code::context_lost) return health_->poison(status);
  return status;
}

namespace {

// `result`, a sticky error in it poisoning the device first (as CudaContext::check does for a CUDA call's).
template <class T>
Result<T> poisoning_if_lost(Health& health, Result<T> result) {
  if (!result.ok() && result.status().code() == Code::context_lost) return health.poison(result.status());
  return result;
}

}  // namespace

Result<EventRef> CudaContext::record_event(cudaStream_t stream) {
  return poisoning_if_lost(*health_, events_->record(stream));
}

Result<EventRef> CudaContext::mark_event(cudaStream_t stream) {
  return poisoning_if_lost(*health_, events_->mark(stream));
}

Result<cudaEvent_t> CudaContext::recorded(const Event& event) { return poisoning_if_lost(*health_, event.recorded()); }

BufferOrdering& CudaContext::ordering_of(const BufferHandle& handle) {
  if (handle.slot >= ordering_.size()) ordering_.resize(handle.slot + 1);
  return ordering_[handle.slot];
}

Status CudaContext::order_before(cudaStream_t stream, const BufferHandle& handle, Access access) {
  BufferOrdering& ordering = ordering_of(handle);
  ++ordering.requests;
  if (ordering.last_write && ordering.last_write->stream != stream && !ordering.last_write_done) {
    // A write seen done once is waited for by nobody after: a buffer written once and read from other streams or
    // GPUs again and again (weights, the source of repeated copies between GPUs) costs one query, not a
    // cross-stream wait on the GPU every time.
    ACCEL_ASSIGN_OR_RETURN(const cudaEvent_t written, recorded(*ordering.last_write->event));
    const cudaError_t query = cudaEventQuery(written);
    if (query == cudaSuccess) {
      ordering.last_write_done = true;
    } else if (query == cudaErrorNotReady) {
      ACCEL_RETURN_IF_ERROR(
          check(cudaStreamWaitEvent(stream, written), "cudaStreamWaitEvent (after the buffer's last write)"));
    } else {
      ACCEL_RETURN_IF_ERROR(check(query, "cudaEventQuery (the buffer's last write)"));
    }
  }
  if (access == Access::write) {
    for (const StreamUse& read : ordering.reads_since) {
      if (read.stream == stream) continue;
      ACCEL_ASSIGN_OR_RETURN(const cudaEvent_t read_done, recorded(*read.event));
      ACCEL_RETURN_IF_ERROR(
          check(cudaStreamWaitEvent(stream, read_done), "cudaStreamWaitEvent (after the buffer's reads)"));
    }
  }
  return Status();
}

void CudaContext::order_after(cudaStream_t stream, const BufferHandle& handle, Access access, const EventRef& event) {
  BufferOrdering& ordering = ordering_of(handle);
  if (access == Access::write) {
    ordering.last_write = StreamUse{stream, event};
    ordering.last_write_done = false;
    ordering.reads_since.clear();
    return;
  }
  for (StreamUse& read : ordering.reads_since) {
    if (read.stream == stream) {
      read.event = event;
      return;
    }
  }
  ordering.reads_since.push_back(StreamUse{stream, event});
}

void CudaContext::stamp_versions(const Operands& operands, std::span<BufferView> views) {
  std::size_t index = 0;
  for (const Operand& operand : operands.list()) {
    BufferView& view = views[index++];
    // Memory another library holds changes untracked: version 0, which no family reuses on.
    if (!operand.buffer.is_null())
      view.version = table_.is_shared(operand.buffer) ? 0 : ordering_of(operand.buffer).version;
  }
}

Result<bool> CudaContext::adopt(cudaStream_t stream, const BufferHandle& handle, std::uint64_t write_version,
                                void* memory, std::uint64_t bytes) {
  const Result<BufferView> view = table_.resolve(handle, "adopted");
  if (!view.ok() || view->bytes() != bytes || write_version == 0 || table_.is_shared(handle)) return false;
  const BufferOrdering& ordering = ordering_of(handle);
  if (ordering.version != write_version || ordering.requests != 1) return false;
  // This stream already follows the buffer's allocation (order_before), and no other stream has used it since.
  ACCEL_RETURN_IF_ERROR(check(cudaFreeAsync(view->data, stream), "cudaFreeAsync (a buffer's replaced memory)"));
  ACCEL_RETURN_IF_ERROR(table_.replace_memory(handle, memory));
  return true;
}

Status CudaContext::order_all_before_free(cudaStream_t stream, const BufferHandle& handle) {
  ACCEL_RETURN_IF_ERROR(order_before(stream, handle, Access::write));
  ordering_of(handle) = BufferOrdering{};
  return Status();
}

Status CudaContext::reset_buffers(cudaStream_t stream, std::uint32_t epoch) {
  for (BufferOrdering& ordering : ordering_) {
    std::vector<const StreamUse*> uses;
    if (ordering.last_write) uses.push_back(&*ordering.last_write);
    for (const StreamUse& read : ordering.reads_since) uses.push_back(&read);
    for (const StreamUse* use : uses) {
      if (use->stream == stream) continue;
      ACCEL_ASSIGN_OR_RETURN(const cudaEvent_t used, recorded(*use->event));
      ACCEL_RETURN_IF_ERROR(check(cudaStreamWaitEvent(stream, used), "cudaStreamWaitEvent (reset)"));
    }
  }
  Status freed;
  table_.for_each_owned([&](const BufferView& view) {
    if (freed.ok()) freed = check(cudaFreeAsync(view.data, stream), "cudaFreeAsync (reset)");
  });
  ACCEL_RETURN_IF_ERROR(freed);
  if (!exports_.empty() || !imports_.empty()) {
    ACCEL_RETURN_IF_ERROR(
        check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (before letting shared memory go)"));
    release_all_shared(/*closing=*/false);
  }
  table_ = BufferTable(table_.device_id(), epoch, name_);
  ordering_.clear();
  fences_.clear();  // the old epoch's fences are stale from now on
  stats_ = MemoryStats{.peak_bytes = stats_.peak_bytes,
                       .allocations = stats_.allocations,
                       .frees = stats_.frees + stats_.live_buffers,
                       .failed_allocations = stats_.failed_allocations};
  return Status();
}

Fence CudaContext::add_fence(std::uint32_t stream_id, EventRef event) {
  constexpr std::size_t kFirstPrune = 64;
  // Fences whose event has completed are forgotten: waiting for them needs nothing. Pruning only once the table
  // has doubled since the last time keeps the cost per fence constant.
  if (fences_.size() >= std::max(fence_prune_at_, kFirstPrune)) {
    // A fence's event is recorded at once (RecordFence).
    std::erase_if(fences_, [](const auto& entry) {
      const Result<cudaEvent_t> event = entry.second.event->recorded();
      return event.ok() && cudaEventQuery(*event) == cudaSuccess;
    });
    fence_prune_at_ = 2 * fences_.size();
  }
  const Fence fence{
      .device = table_.device_id(), .stream = stream_id, .epoch = table_.epoch(), .sequence = ++fences_recorded_};
  fences_.emplace(fence.sequence, FencePoint{.stream_id = stream_id, .event = std::move(event)});
  return fence;
}

Status CudaContext::wait_fence(cudaStream_t stream, std::uint32_t stream_id, const Fence& fence) {
  ACCEL_RETURN_IF_ERROR(table_.check_fence(fence, fences_recorded_));
  if (fence.stream == stream_id) return Status();  // the stream's own order puts it behind already
  const auto point = fences_.find(fence.sequence);
  if (point == fences_.end()) return Status();  // reached
  ACCEL_ASSIGN_OR_RETURN(const cudaEvent_t fenced, recorded(*point->second.event));
  return check(cudaStreamWaitEvent(stream, fenced), "cudaStreamWaitEvent (WaitFence)");
}

}  // namespace accel::device::cuda

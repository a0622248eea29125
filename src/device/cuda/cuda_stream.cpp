#include "device/cuda/cuda_stream.hpp"

#include <fmt/format.h>

#include <cstring>

#include "device/cuda/cuda_status.hpp"
#include "device/cuda/fault_kernel.hpp"
#include "dnn/graph_bindings.hpp"
#include "dnn/plan_key.hpp"
#include "libs/blas/gemm_operands.hpp"

namespace accel::device::cuda {
namespace {

std::byte* element_address(const BufferView& view, std::uint64_t offset) {
  return static_cast<std::byte*>(view.data) + offset * size_of(view.dtype);
}

}  // namespace

CudaStream::CudaStream(std::shared_ptr<DeviceShared> shared, std::shared_ptr<CudaContext> context)
    : shared_(std::move(shared)), context_(std::move(context)) {}

Result<std::unique_ptr<CudaStream>> CudaStream::create(std::shared_ptr<DeviceShared> shared,
                                                       std::shared_ptr<CudaContext> context) {
  ACCEL_RETURN_IF_ERROR(context->check_healthy());
  std::unique_ptr<CudaStream> stream(new CudaStream(std::move(shared), std::move(context)));
  CudaContext& ctx = *stream->context_;
  ACCEL_RETURN_IF_ERROR(ctx.check(cudaSetDevice(ctx.ordinal()), "cudaSetDevice"));
  ACCEL_RETURN_IF_ERROR(
      ctx.check(cudaStreamCreateWithFlags(&stream->stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
  const std::uint64_t workspace_bytes = ctx.options().gemm_workspace_bytes;
  if (workspace_bytes != 0) {
    ACCEL_RETURN_IF_ERROR(
        ctx.check(cudaMallocFromPoolAsync(&stream->workspace_, workspace_bytes, ctx.pool(), stream->stream_),
                  fmt::format("allocating the {}-byte GEMM workspace", workspace_bytes)));
  }
  ACCEL_ASSIGN_OR_RETURN(stream->gemm_, blas::CublasLtGemm::create(ctx.options().gemm_plan_cache_capacity,
                                                                   stream->workspace_, workspace_bytes));
  return stream;
}

CudaStream::~CudaStream() {
  gemm_.reset();
  if (stream_ == nullptr || context_->check_healthy().code() == Code::context_lost) return;
  if (dnn_ != nullptr) cudnnDestroy(dnn_);
  if (scratch_ != nullptr) cudaFreeAsync(scratch_, stream_);
  if (workspace_ != nullptr) cudaFreeAsync(workspace_, stream_);
  cudaStreamSynchronize(stream_);
  cudaStreamDestroy(stream_);
}

Result<Done> CudaStream::wait_for(Result<Submitted> submitted) {
  ACCEL_ASSIGN_OR_RETURN(Submitted work, std::move(submitted));
  return context_->completions().wait(std::move(work));
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
  ACCEL_RETURN_IF_ERROR(context_->check(cudaFreeAsync(view.data, stream_), "cudaFreeAsync"));
  MemoryStats& stats = context_->stats();
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
  std::vector<LibraryVersion> libraries = {blas::cublaslt_library()};
  for (LibraryVersion& library : dnn::cudnn::cudnn_libraries()) libraries.push_back(std::move(library));
  std::vector<CacheStats> caches = {gemm_->stats(), context_->dnn_plans().stats()};
  for (CacheStats& stats : context_->jit().stats()) caches.push_back(std::move(stats));
  return DeviceInfo{
      .kind = DeviceKind::cuda,
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
      .memory = memory,
      .libraries = std::move(libraries),
      .caches = std::move(caches)};
}

// -- copies ----------------------------------------------------------------------------------------------

Result<Submitted> CudaStream::enqueue(CopyToDevice& request) {
  const HostSource& source = request.source;
  if (source.data == nullptr && source.count != 0) return invalid_argument("CopyToDevice: null host source");
  const std::size_t bytes = source.count * size_of(source.dtype);
  // Pageable memory is staged through a pinned block first (outside the lock), so the copy itself is
  // asynchronous and the caller's memory is free again when the future is ready.
  PinnedBlock staging;
  const void* from = source.data;
  if (bytes != 0 && !is_pinned_host(source.data)) {
    ACCEL_ASSIGN_OR_RETURN(staging, context_->pinned().take(bytes));
    std::memcpy(staging.data(), source.data, bytes);
    from = staging.data();
  }
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(
      const BufferView destination,
      context_->table().resolve_range(request.destination, "destination", request.destination_offset, source.count));
  ACCEL_RETURN_IF_ERROR(check_host_dtype(source.dtype, destination.dtype, "the host source"));
  return ordered({{request.destination, Access::write}}, [&]() -> Result<Submitted> {
    if (bytes != 0) {
      ACCEL_RETURN_IF_ERROR(context_->check(cudaMemcpyAsync(element_address(destination, request.destination_offset),
                                                            from, bytes, cudaMemcpyHostToDevice, stream_),
                                            "cudaMemcpyAsync (host to device)"));
    }
    return Submitted{.staging = std::move(staging)};
  });
}

Result<Submitted> CudaStream::enqueue(CopyToHost& request) {
  const HostDestination& destination = request.destination;
  if (destination.data == nullptr && destination.count != 0)
    return invalid_argument("CopyToHost: null host destination");
  const std::size_t bytes = destination.count * size_of(destination.dtype);
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(
      const BufferView source,
      context_->table().resolve_range(request.source, "source", request.source_offset, destination.count));
  ACCEL_RETURN_IF_ERROR(check_host_dtype(destination.dtype, source.dtype, "the host destination"));
  return ordered({{request.source, Access::read}}, [&]() -> Result<Submitted> {
    Submitted submitted;
    if (bytes == 0) return submitted;
    void* to = destination.data;
    if (!is_pinned_host(destination.data)) {
      ACCEL_ASSIGN_OR_RETURN(submitted.staging, context_->pinned().take(bytes));
      to = submitted.staging.data();
      submitted.host_destination = destination.data;
      submitted.host_bytes = bytes;
    }
    ACCEL_RETURN_IF_ERROR(context_->check(
        cudaMemcpyAsync(to, element_address(source, request.source_offset), bytes, cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync (device to host)"));
    return submitted;
  });
}

Result<Submitted> CudaStream::enqueue(CopyOnDevice& request) {
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  BufferTable& table = context_->table();
  ACCEL_ASSIGN_OR_RETURN(const BufferView source,
                         table.resolve_range(request.source, "source", request.source_offset, request.count));
  ACCEL_ASSIGN_OR_RETURN(const BufferView destination, table.resolve_range(request.destination, "destination",
                                                                           request.destination_offset, request.count));
  if (source.dtype != destination.dtype) {
    return invalid_argument(fmt::format("CopyOnDevice from {} to {}: element types differ", to_string(source.dtype),
                                        to_string(destination.dtype)));
  }
  const std::size_t bytes = request.count * size_of(source.dtype);
  std::byte* from = element_address(source, request.source_offset);
  std::byte* to = element_address(destination, request.destination_offset);
  const bool overlapping = source.data == destination.data && from < to + bytes && to < from + bytes && from != to;
  return ordered({{request.source, Access::read}, {request.destination, Access::write}}, [&]() -> Result<Submitted> {
    if (bytes == 0 || from == to) return Submitted{};
    if (!overlapping) {
      ACCEL_RETURN_IF_ERROR(context_->check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream_),
                                            "cudaMemcpyAsync (device to device)"));
      return Submitted{};
    }
    // Overlapping ranges of one buffer (memmove semantics) go through a temporary from the pool.
    void* temporary = nullptr;
    ACCEL_RETURN_IF_ERROR(context_->check(cudaMallocFromPoolAsync(&temporary, bytes, context_->pool(), stream_),
                                          "allocating a temporary for an overlapping copy"));
    Status copied = context_->check(cudaMemcpyAsync(temporary, from, bytes, cudaMemcpyDeviceToDevice, stream_),
                                    "cudaMemcpyAsync (to a temporary)");
    if (copied.ok()) {
      copied = context_->check(cudaMemcpyAsync(to, temporary, bytes, cudaMemcpyDeviceToDevice, stream_),
                               "cudaMemcpyAsync (from a temporary)");
    }
    Status freed = context_->check(cudaFreeAsync(temporary, stream_), "cudaFreeAsync (temporary)");
    ACCEL_RETURN_IF_ERROR(copied);
    ACCEL_RETURN_IF_ERROR(freed);
    return Submitted{};
  });
}

// -- libraries -------------------------------------------------------------------------------------------

Result<Submitted> CudaStream::enqueue(Gemm& request) {
  ACCEL_ASSIGN_OR_RETURN(const GemmGeometry geometry, plan_gemm_geometry(request.shape));
  ACCEL_RETURN_IF_ERROR(blas::check_cublaslt_support(geometry, context_->compute_capability()));
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(const blas::GemmOperands operands,
                         blas::resolve_gemm_operands(request, geometry, context_->table()));
  auto launch = [&]() -> Result<Submitted> {
    Status launched = gemm_->enqueue(geometry, operands, request.alpha, request.beta, stream_);
    if (!launched.ok()) {
      // A failed launch may hide a sticky error of earlier work; that one decides what the device does.
      if (cudaError_t pending = cudaPeekAtLastError(); is_sticky(pending)) return context_->check(pending, "cuBLASLt");
      return launched;
    }
    return Submitted{};
  };
  if (has_bias(geometry.shape.epilogue)) {
    return ordered({{request.a, Access::read},
                    {request.b, Access::read},
                    {request.bias, Access::read},
                    {request.c, Access::write}},
                   launch);
  }
  return ordered({{request.a, Access::read}, {request.b, Access::read}, {request.c, Access::write}}, launch);
}

Result<cudnnHandle_t> CudaStream::dnn_handle() {
  if (dnn_ != nullptr) return dnn_;
  cudnnHandle_t handle = nullptr;
  if (cudnnStatus_t status = cudnnCreate(&handle); status != CUDNN_STATUS_SUCCESS) {
    return Status(Code::unavailable, fmt::format("cudnnCreate: {}", cudnnGetErrorString(status)), Source::cudnn,
                  status);
  }
  if (cudnnStatus_t status = cudnnSetStream(handle, stream_); status != CUDNN_STATUS_SUCCESS) {
    cudnnDestroy(handle);
    return Status(Code::internal, fmt::format("cudnnSetStream: {}", cudnnGetErrorString(status)), Source::cudnn,
                  status);
  }
  dnn_ = handle;
  return dnn_;
}

// The workspace only grows; the old one is freed in stream order, after the work that used it.
Status CudaStream::reserve_workspace(std::uint64_t bytes) {
  if (bytes <= scratch_bytes_) return Status();
  if (scratch_ != nullptr) {
    ACCEL_RETURN_IF_ERROR(context_->check(cudaFreeAsync(scratch_, stream_), "cudaFreeAsync (workspace)"));
    scratch_ = nullptr;
    scratch_bytes_ = 0;
  }
  ACCEL_RETURN_IF_ERROR(context_->check(cudaMallocFromPoolAsync(&scratch_, bytes, context_->pool(), stream_),
                                        fmt::format("allocating a {}-byte workspace", bytes)));
  scratch_bytes_ = bytes;
  return Status();
}

Result<Submitted> CudaStream::enqueue_graph(std::span<const std::byte> key,
                                            const dnn::cudnn::DnnPlans::GraphFactory& graph,
                                            std::span<const dnn::TensorBinding> bindings) {
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(cudnnHandle_t handle, dnn_handle());
  ACCEL_ASSIGN_OR_RETURN(const std::shared_ptr<const dnn::cudnn::PlannedGraph> planned,
                         context_->dnn_plans().find_or_build(key, handle, graph));
  const dnn::cudnn::CudnnPlan& plan = *planned->plan;
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  ACCEL_ASSIGN_OR_RETURN(const std::vector<dnn::BoundTensor> bound,
                         dnn::resolve_bindings(*planned->graph, bindings, context_->table()));
  std::vector<Use> uses;
  std::vector<std::pair<std::uint32_t, void*>> addresses;
  uses.reserve(bound.size());
  addresses.reserve(bound.size());
  for (const dnn::BoundTensor& b : bound) {
    uses.push_back({b.handle, b.written ? Access::write : Access::read});
    addresses.emplace_back(b.uid, b.view.data);
  }
  return ordered(std::span<const Use>(uses), [&]() -> Result<Submitted> {
    ACCEL_RETURN_IF_ERROR(reserve_workspace(static_cast<std::uint64_t>(dnn::cudnn::workspace_bytes(plan))));
    Status launched = dnn::cudnn::execute(plan, handle, addresses, scratch_);
    if (!launched.ok()) {
      if (cudaError_t pending = cudaPeekAtLastError(); is_sticky(pending)) return context_->check(pending, "cuDNN");
      return launched;
    }
    return Submitted{};
  });
}

Result<Submitted> CudaStream::enqueue(ConvFwd& request) {
  return enqueue_graph(
      dnn::plan_key(request), [&] { return dnn::graph_of(request); }, dnn::bindings_of(request));
}
Result<Submitted> CudaStream::enqueue(ConvBwdData& request) {
  return enqueue_graph(
      dnn::plan_key(request), [&] { return dnn::graph_of(request); }, dnn::bindings_of(request));
}
Result<Submitted> CudaStream::enqueue(ConvBwdFilter& request) {
  return enqueue_graph(
      dnn::plan_key(request), [&] { return dnn::graph_of(request); }, dnn::bindings_of(request));
}
Result<Submitted> CudaStream::enqueue(RunGraph& request) {
  if (request.graph == nullptr) return invalid_argument("RunGraph without a graph");
  return enqueue_graph(
      dnn::plan_key(*request.graph), [&]() -> Result<std::shared_ptr<const dnn::Graph>> { return request.graph; },
      request.bindings);
}

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

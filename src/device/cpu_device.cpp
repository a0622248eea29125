#include "device/cpu_device.hpp"

#include <fmt/format.h>

#include <cstring>
#include <new>

#include "dnn/cpu/graph_interpreter.hpp"
#include "dnn/graph_bindings.hpp"
#include "jit/cutlass_operands.hpp"
#include "libs/blas/cpu_gemm.hpp"
#include "libs/blas/gemm_operands.hpp"

namespace accel::device {
namespace {

constexpr std::align_val_t kAlignment{64};

}  // namespace

CpuDevice::CpuDevice(std::shared_ptr<DeviceShared> shared)
    : shared_(std::move(shared)), table_(shared_->id, shared_->next_epoch(), shared_->name) {}

CpuDevice::~CpuDevice() { free_all(); }

void CpuDevice::release(const BufferView& view) {
  ::operator delete(view.data, kAlignment);
  stats_.in_use_bytes -= view.bytes();
  stats_.reserved_bytes -= view.bytes();
  --stats_.live_buffers;
  ++stats_.frees;
}

void CpuDevice::collect_released() {
  for (const BufferHandle& handle : shared_->take_released()) {
    if (Result<BufferView> removed = table_.remove(handle); removed.ok()) release(*removed);
  }
}

void CpuDevice::free_all() noexcept {
  table_.for_each_live([](const BufferView& view) { ::operator delete(view.data, kAlignment); });
}

Result<BufferHandle> CpuDevice::handle(Allocate& request) {
  collect_released();
  if (request.count == 0) return invalid_argument("Allocate of 0 elements");
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t bytes, checked_bytes(request.dtype, request.count));
  ACCEL_RETURN_IF_ERROR(check_memory_limit(shared_->name, bytes, shared_->options.memory_limit_bytes, stats_));
  void* data = ::operator new(bytes, kAlignment, std::nothrow);
  if (data == nullptr) {
    ++stats_.failed_allocations;
    return Status(Code::resource_exhausted,
                  fmt::format("{}: out of host memory allocating {} bytes", shared_->name, bytes), Source::os);
  }
  stats_.in_use_bytes += bytes;
  stats_.reserved_bytes += bytes;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.in_use_bytes);
  ++stats_.live_buffers;
  ++stats_.allocations;
  return table_.insert(data, request.dtype, request.count);
}

Result<Done> CpuDevice::handle(Free& request) {
  collect_released();
  ACCEL_ASSIGN_OR_RETURN(BufferView view, table_.remove(request.buffer));
  release(view);
  return Done{};
}

Result<Done> CpuDevice::handle(ResetContext&) {
  free_all();
  shared_->take_released();
  table_ = BufferTable(shared_->id, shared_->next_epoch(), shared_->name);
  stats_ = MemoryStats{.peak_bytes = stats_.peak_bytes};
  return Done{};
}

Result<DeviceInfo> CpuDevice::handle(QueryDevice&) {
  collect_released();
  return DeviceInfo{.kind = DeviceKind::cpu,
                    .ordinal = shared_->options.ordinal,
                    .device_id = shared_->id,
                    .epoch = table_.epoch(),
                    .name = shared_->name,
                    .memory_capacity_bytes = shared_->options.memory_limit_bytes,
                    .memory = stats_,
                    .libraries = {blas::cpu_blas_library(), {.name = "accel CPU reference", .version = "built in"}}};
}

Result<Done> CpuDevice::handle(CopyToDevice& request) {
  if (request.source.data == nullptr && request.source.count != 0)
    return invalid_argument("CopyToDevice: null host source");
  ACCEL_ASSIGN_OR_RETURN(BufferView dst, table_.resolve_range(request.destination, "destination",
                                                              request.destination_offset, request.source.count));
  ACCEL_RETURN_IF_ERROR(check_host_dtype(request.source.dtype, dst.dtype, "the host source"));
  const std::size_t element = size_of(dst.dtype);
  if (request.source.count != 0) {
    std::memcpy(static_cast<std::byte*>(dst.data) + request.destination_offset * element, request.source.data,
                request.source.count * element);
  }
  return Done{};
}

Result<Done> CpuDevice::handle(CopyToHost& request) {
  if (request.destination.data == nullptr && request.destination.count != 0) {
    return invalid_argument("CopyToHost: null host destination");
  }
  ACCEL_ASSIGN_OR_RETURN(
      BufferView src, table_.resolve_range(request.source, "source", request.source_offset, request.destination.count));
  ACCEL_RETURN_IF_ERROR(check_host_dtype(request.destination.dtype, src.dtype, "the host destination"));
  const std::size_t element = size_of(src.dtype);
  if (request.destination.count != 0) {
    std::memcpy(request.destination.data, static_cast<const std::byte*>(src.data) + request.source_offset * element,
                request.destination.count * element);
  }
  return Done{};
}

Result<Done> CpuDevice::handle(CopyOnDevice& request) {
  ACCEL_ASSIGN_OR_RETURN(BufferView src,
                         table_.resolve_range(request.source, "source", request.source_offset, request.count));
  ACCEL_ASSIGN_OR_RETURN(BufferView dst, table_.resolve_range(request.destination, "destination",
                                                              request.destination_offset, request.count));
  if (src.dtype != dst.dtype) {
    return invalid_argument(
        fmt::format("CopyOnDevice from {} to {}: element types differ", to_string(src.dtype), to_string(dst.dtype)));
  }
  const std::size_t element = size_of(src.dtype);
  if (request.count != 0) {
    std::memmove(static_cast<std::byte*>(dst.data) + request.destination_offset * element,
                 static_cast<const std::byte*>(src.data) + request.source_offset * element, request.count * element);
  }
  return Done{};
}

Result<Done> CpuDevice::handle(Gemm& request) {
  ACCEL_ASSIGN_OR_RETURN(const GemmGeometry geometry, plan_gemm_geometry(request.shape));
  ACCEL_RETURN_IF_ERROR(blas::check_cpu_gemm_support(geometry));
  ACCEL_ASSIGN_OR_RETURN(const blas::GemmOperands operands, blas::resolve_gemm_operands(request, geometry, table_));
  blas::run_cpu_gemm(geometry, operands, request.alpha, request.beta);
  return Done{};
}

Result<Done> CpuDevice::run_graph(const Result<std::shared_ptr<const dnn::Graph>>& graph,
                                  std::span<const dnn::TensorBinding> bindings) {
  collect_released();
  ACCEL_RETURN_IF_ERROR(graph.status());
  if (*graph == nullptr) return invalid_argument("RunGraph without a graph");
  ACCEL_ASSIGN_OR_RETURN(const std::vector<dnn::BoundTensor> bound, dnn::resolve_bindings(**graph, bindings, table_));
  std::vector<std::pair<std::uint32_t, dnn::cpu::HostTensor>> memory;
  memory.reserve(bound.size());
  for (const dnn::BoundTensor& b : bound) memory.push_back({b.uid, {b.view.data, b.view.dtype, b.view.count}});
  ACCEL_RETURN_IF_ERROR(dnn::cpu::run_graph(**graph, memory));
  return Done{};
}

Result<Done> CpuDevice::handle(ConvFwd& request) { return run_conv(request); }
Result<Done> CpuDevice::handle(ConvBwdData& request) { return run_conv(request); }
Result<Done> CpuDevice::handle(ConvBwdFilter& request) { return run_conv(request); }
Result<Done> CpuDevice::handle(RunGraph& request) { return run_graph(request.graph, request.bindings); }

Result<Done> CpuDevice::handle(LaunchKernel& request) {
  return not_supported(fmt::format("{}: LaunchKernel runs a CUDA C++ kernel ({}) and needs a CUDA device",
                                   shared_->name, request.kernel));
}

Result<Done> CpuDevice::handle(CutlassGemm& request) {
  collect_released();
  ACCEL_ASSIGN_OR_RETURN(const jit::CutlassGemmGeometry geometry, jit::check_cutlass_gemm(request));
  ACCEL_ASSIGN_OR_RETURN(const jit::CutlassGemmOperands operands, jit::resolve_cutlass_gemm(request, geometry, table_));
  jit::reference_gemm(request, geometry, operands);
  return Done{};
}

Result<Done> CpuDevice::handle(CutlassGroupedGemm& request) {
  collect_released();
  ACCEL_ASSIGN_OR_RETURN(const std::vector<jit::CutlassGemmGeometry> groups, jit::check_cutlass_grouped_gemm(request));
  ACCEL_ASSIGN_OR_RETURN(const std::vector<jit::CutlassGemmOperands> operands,
                         jit::resolve_cutlass_grouped_gemm(request, groups, table_));
  jit::reference_grouped_gemm(request, groups, operands);
  return Done{};
}

// The convolution request of the same pass, then out = alpha * result + beta * (out as it was).
Result<Done> CpuDevice::handle(CutlassConv& request) {
  collect_released();
  ACCEL_RETURN_IF_ERROR(jit::check_cutlass_conv(request));
  ACCEL_ASSIGN_OR_RETURN(const jit::ConvExtents extents, jit::conv_extents(request.shape));
  const auto [written, count] = request.pass == ConvPass::fprop   ? std::pair{request.y, extents.y}
                                : request.pass == ConvPass::dgrad ? std::pair{request.x, extents.x}
                                                                  : std::pair{request.w, extents.w};
  ACCEL_ASSIGN_OR_RETURN(const BufferView out, table_.resolve_range(written, "the written tensor", 0, count));
  std::vector<std::byte> before;
  const bool blend = request.alpha != 1.0f || request.beta != 0.0f;
  if (blend) {
    const auto* first = static_cast<const std::byte*>(out.data);
    before.assign(first, first + count * size_of(out.dtype));
  }
  const Result<Done> done = std::visit([&](const auto& conv) { return run_conv(conv); }, jit::library_conv(request));
  ACCEL_RETURN_IF_ERROR(done.status());
  if (blend) {
    jit::blend(out.data, before.data(), out.dtype, count, request.alpha, request.beta);
  }
  return Done{};
}

Result<Done> CpuDevice::handle(InjectFault& request) {
  if (request.kind == FaultKind::illegal_address) {
    return not_supported(fmt::format("{}: FaultKind::illegal_address exists for CUDA devices only", shared_->name));
  }
  return not_supported(fmt::format("{}: FaultKind::{} needs an isolated device (Isolation::worker_process)",
                                   shared_->name, to_string(request.kind)));
}

namespace {

class CpuBackend final : public DeviceBackend {
 public:
  Result<std::unique_ptr<DeviceProtocol::Handler>> make_stream_state(std::shared_ptr<DeviceShared> shared) override {
    return std::make_unique<CpuDevice>(std::move(shared));
  }
  bool has_streams() const noexcept override { return false; }
  Status health() const override { return Status(); }
};

}  // namespace

std::shared_ptr<DeviceBackend> make_cpu_backend() { return std::make_shared<CpuBackend>(); }

}  // namespace accel::device

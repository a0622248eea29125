#include "device/cuda/recorded_preparation.hpp"

#include <fmt/format.h>

#include <memory>
#include <type_traits>
#include <variant>

#include "device/cuda/cuda_resources.hpp"
#include "device/cuda/library_operations_cuda.hpp"
#include "device/recorded_steps.hpp"
#include "operation/cuda_copy.hpp"

namespace accel::device::cuda {
namespace {

template <class Request>
Status run_linked_steps(std::span<const std::any> links, CudaRun& run) {
  using Link = typename CudaOperation<Request>::Link;
  std::vector<Link> typed;
  typed.reserve(links.size());
  for (const std::any& link : links) typed.push_back(std::any_cast<const Link&>(link));
  return CudaOperation<Request>::run_linked(typed, run);
}

// A copy between buffers, as CudaStream::enqueue(CopyOnDevice&) makes it, captured: an overlapping one goes
// through a temporary of the graph's own (cudaMallocAsync in a capture is a memory node).
Status prepare_copy(const CopyOnDevice& copy, Prepared& step, bool with_run) {
  step.operands.range(copy.source, "source", Access::read, copy.source_offset, copy.count)
      .range(copy.destination, "destination", Access::write, copy.destination_offset, copy.count);
  if (!with_run) return Status();
  step.run = [copy](std::span<const BufferView> views, CudaRun& run) -> Status {
    const BufferView& source = views[0];
    const BufferView& destination = views[1];
    if (source.dtype != destination.dtype) {
      return invalid_argument(fmt::format("CopyOnDevice from {} to {}: element types differ", to_string(source.dtype),
                                          to_string(destination.dtype)));
    }
    const std::size_t bytes = copy.count * size_of(source.dtype);
    std::byte* from = source.at(copy.source_offset);
    std::byte* to = destination.at(copy.destination_offset);
    if (bytes == 0 || from == to) return Status();
    cudaStream_t stream = run.target.stream();
    const bool overlapping = source.data == destination.data && from < to + bytes && to < from + bytes;
    if (!overlapping) {
      return run.target.check(copy_on_device(to, from, bytes, stream), "copying on the device");
    }
    void* temporary = nullptr;
    ACCEL_RETURN_IF_ERROR(run.target.check(cudaMallocAsync(&temporary, bytes, stream), "allocating a temporary"));
    Status copied = run.target.check(copy_on_device(temporary, from, bytes, stream), "copying to a temporary");
    if (copied.ok()) {
      copied = run.target.check(copy_on_device(to, temporary, bytes, stream), "copying from a temporary");
    }
    const Status freed = run.target.check(cudaFreeAsync(temporary, stream), "cudaFreeAsync (temporary)");
    ACCEL_RETURN_IF_ERROR(copied);
    return freed;
  };
  return Status();
}

// A host copy, captured as a memcpy node: its host memory must be pinned (a graph cannot stage pageable memory
// through a block of its own, and the memory must stay valid while the recording is launched), all of it in one
// allocation or registration, which the step keeps (the graph's copy holds that registration's translation).
template <class Copy>
Status prepare_host_copy(const Copy& copy, Prepared& step, bool with_run) {
  constexpr bool kUpload = std::is_same_v<Copy, CopyToDevice>;
  const void* host = nullptr;
  DType host_dtype = DType::f32;
  std::uint64_t count = 0;
  DType buffer_dtype = DType::f32;
  if constexpr (kUpload) {
    buffer_dtype = copy.destination.dtype;
    host = copy.source.data;
    host_dtype = copy.source.dtype;
    count = copy.source.count;
    step.operands.range(copy.destination, "destination", Access::write, copy.destination_offset, count);
  } else {
    buffer_dtype = copy.source.dtype;
    host = copy.destination.data;
    host_dtype = copy.destination.dtype;
    count = copy.destination.count;
    step.operands.range(copy.source, "source", Access::read, copy.source_offset, count);
  }
  const char* name = kUpload ? "host source" : "host destination";
  if (host == nullptr && count != 0) return invalid_argument(fmt::format("{}: null {}", Copy::kName, name));
  // The buffer's dtype is its handle's (the generation names one allocation).
  ACCEL_RETURN_IF_ERROR(
      check_host_dtype(host_dtype, buffer_dtype, kUpload ? "the host source" : "the host destination"));
  const std::size_t bytes = count * size_of(host_dtype);
  if (bytes != 0) {
    const std::optional<std::uint64_t> allocation = pinned_host_allocation(host, bytes);
    if (!allocation) {
      return not_supported(
          fmt::format("{}: the {} is pageable host memory, which a CUDA graph cannot copy; pin it (cudaHostAlloc or "
                      "cudaHostRegister) for the recording's life",
                      Copy::kName, name));
    }
    step.host_allocation = *allocation;
  }
  if (!with_run) return Status();
  step.run = [copy, host, bytes](std::span<const BufferView> views, CudaRun& run) -> Status {
    const BufferView& buffer = views[0];
    if (bytes == 0) return Status();
    if constexpr (kUpload) {
      return run.target.check(
          cudaMemcpyAsync(buffer.at(copy.destination_offset), host, bytes, cudaMemcpyHostToDevice, run.target.stream()),
          "cudaMemcpyAsync (host to device)");
    } else {
      return run.target.check(cudaMemcpyAsync(const_cast<void*>(host), buffer.at(copy.source_offset), bytes,
                                              cudaMemcpyDeviceToHost, run.target.stream()),
                              "cudaMemcpyAsync (device to host)");
    }
  };
  return Status();
}

// A library request through its operation contract, up to (not including) its run step; without the run, only
// validated and its operands named.
template <class Request>
Status prepare_operation(const Request& request, CudaTarget& target, Prepared& step, bool with_run) {
  using Op = Operation<Request>;
  using CudaOp = CudaOperation<Request>;
  ACCEL_ASSIGN_OR_RETURN(typename Op::Checked checked, Op::validate(request));
  if (!with_run) {
    Op::operands(request, checked, step.operands);
    return Status();
  }
  ACCEL_ASSIGN_OR_RETURN(typename CudaOp::Plan plan, CudaOp::plan(request, checked, target));
  if constexpr (HasHostResult<Request>) {
    if (CudaOp::host_result_bytes(plan) != 0) {
      return not_supported(
          fmt::format("{} answers a result through the host, which a CUDA graph cannot", Request::kName));
    }
  }
  Op::operands(request, checked, step.operands);
  step.workspace_bytes = CudaOp::workspace_bytes(plan);
  struct Kept {
    Request request;
    typename Op::Checked checked;
    typename CudaOp::Plan plan;
  };
  auto kept = std::make_shared<Kept>(Kept{request, std::move(checked), std::move(plan)});
  step.run = [kept](std::span<const BufferView> views, CudaRun& run) -> Status {
    ACCEL_RETURN_IF_ERROR(CudaOp::run(kept->request, kept->checked, kept->plan, views, run));
    if (run.check_result) {
      return internal_error(fmt::format("{} checks its result on the host, which a CUDA graph cannot", Request::kName));
    }
    return Status();
  };
  if constexpr (LinksSteps<Request>) {
    step.link = [kept](std::span<const BufferView> views) -> std::optional<std::any> {
      std::optional<typename CudaOp::Link> link = CudaOp::link(kept->request, kept->checked, kept->plan, views);
      if (!link) return std::nullopt;
      return std::any(std::move(*link));
    };
    step.run_linked = &run_linked_steps<Request>;
  }
  return Status();
}

}  // namespace

std::vector<Prepared> prepare_steps(const RunRecorded& request, CudaTarget& target, bool with_run) {
  std::vector<Prepared> steps(request.steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Status prepared = std::visit(
        [&]<class Step>(const Step& step) {
          if constexpr (std::is_same_v<Step, CopyOnDevice>) {
            return prepare_copy(step, steps[i], with_run);
          } else if constexpr (std::is_same_v<Step, CopyToDevice> || std::is_same_v<Step, CopyToHost>) {
            return prepare_host_copy(step, steps[i], with_run);
          } else {
            return prepare_operation(step, target, steps[i], with_run);
          }
        },
        request.steps[i]);
    if (!prepared.ok()) steps[i].refused = step_failure(i, request.steps[i], prepared);
  }
  return steps;
}

std::vector<std::any> links_from(const std::vector<Prepared>& steps, std::size_t first) {
  std::vector<std::any> links;
  const auto runs_linked = steps[first].run_linked;
  for (std::size_t j = first; runs_linked != nullptr && j < steps.size(); ++j) {
    const Prepared& step = steps[j];
    if (!step.refused.ok() || step.run_linked != runs_linked || step.workspace_bytes != 0) break;
    std::optional<std::any> link = step.link(step.views);
    if (!link) break;
    links.push_back(std::move(*link));
  }
  if (links.size() < 2) links.clear();
  return links;
}

bool is_host_copy(const RecordedStep& step) noexcept {
  return std::holds_alternative<CopyToDevice>(step) || std::holds_alternative<CopyToHost>(step);
}

const void* host_memory(const RecordedStep& step) {
  if (const auto* upload = std::get_if<CopyToDevice>(&step)) return upload->source.data;
  if (const auto* download = std::get_if<CopyToHost>(&step)) return download->destination.data;
  return nullptr;
}

std::optional<HostMemoryUse> checked_host_memory(const RecordedStep& step) {
  // A Prepared is large: made only for a host copy.
  const auto checked = [&](const auto& copy) -> std::optional<HostMemoryUse> {
    Prepared prepared;
    if (!prepare_host_copy(copy, prepared, false).ok()) return std::nullopt;
    return HostMemoryUse{.data = host_memory(step), .allocation = prepared.host_allocation};
  };
  if (const auto* upload = std::get_if<CopyToDevice>(&step)) return checked(*upload);
  if (const auto* download = std::get_if<CopyToHost>(&step)) return checked(*download);
  return std::nullopt;
}

}  // namespace accel::device::cuda

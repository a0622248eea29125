// CudaStream's RunRecorded (include/accel/device/run_recorded.hpp): every step validated, planned and resolved,
// the stream ordered after every buffer's earlier users and the workspace taken, all before the capture; then only
// the steps' run steps are captured, into one CUDA graph kept per recording (recorded_graphs.hpp) and launched.
// A recording whose graph is kept is launched with its steps validated and resolved but not planned, when its
// addresses and workspace are those the graph was captured over: a recording's id names its steps, so their plans
// are those of the capture.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <type_traits>
#include <variant>

#include "device/cuda/cuda_resources.hpp"
#include "device/cuda/cuda_stream.hpp"
#include "device/recorded_steps.hpp"
#include "operation/cuda_copy.hpp"

namespace accel::device::cuda {
namespace {

// One step, checked and planned: what the capture runs, over the views resolved for it.
struct Prepared {
  Status refused;  // its own checks' failure: the step is left out, as the CPU device skips it
  Operands operands;
  std::vector<BufferView> views;
  std::uint64_t workspace_bytes = 0;
  std::function<Status(std::span<const BufferView>, CudaRun&)> run;
};

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
// through a block of its own, and the memory must stay valid while the recording is launched). Both ends of the
// range are checked, so a registration that covers only its start is refused too.
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
  if (bytes != 0 && (!is_pinned_host(host) || !is_pinned_host(static_cast<const std::byte*>(host) + bytes - 1))) {
    return not_supported(
        fmt::format("{}: the {} is pageable host memory, which a CUDA graph cannot copy; pin it (cudaHostAlloc or "
                    "cudaHostRegister) for the recording's life",
                    Copy::kName, name));
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
  return Status();
}

// Every step prepared, with its run step or (`with_run` false) only checked; a step's failure is its `refused`.
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

// The host memory a step copies from or into, or null for a step that is not a host copy.
const void* host_memory(const RecordedStep& step) {
  if (const auto* upload = std::get_if<CopyToDevice>(&step)) return upload->source.data;
  if (const auto* download = std::get_if<CopyToHost>(&step)) return download->destination.data;
  return nullptr;
}

// What the prepared steps use, with the buffers' lock held: each step's views resolved (a step whose operands do not
// resolve is refused), the buffers to order after (each once, as written if any step writes it), the addresses the
// graph is captured over (the workspace's not yet), and the largest workspace of a step.
struct Gathered {
  std::vector<CudaStream::Use> uses;
  RecordedGraphs::Key key;
  std::uint64_t workspace_bytes = 0;
  std::size_t runnable = 0;
  Status first_refused;
};

Gathered gather(const RunRecorded& request, std::vector<Prepared>& steps, CudaContext& context) {
  Gathered out{.key = {.recording = request.recording}};
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Prepared& step = steps[i];
    if (step.refused.ok()) {
      if (Result<std::vector<BufferView>> views = context.table().resolve(step.operands); views.ok()) {
        step.views = std::move(*views);
        context.stamp_versions(step.operands, step.views);
      } else {
        step.refused = step_failure(i, request.steps[i], views.status());
      }
    }
    if (!step.refused.ok()) {
      if (out.first_refused.ok()) out.first_refused = step.refused;
      continue;
    }
    ++out.runnable;
    for (const CudaStream::Use& use : uses_of(step.operands)) {
      auto same = std::find_if(out.uses.begin(), out.uses.end(),
                               [&](const CudaStream::Use& u) { return u.buffer == use.buffer; });
      if (same == out.uses.end()) {
        out.uses.push_back(use);
      } else if (use.access == Access::write) {
        same->access = Access::write;
      }
    }
    for (const BufferView& view : step.views) out.key.addresses.push_back(view.data);
    // A host copy's memory is an address of its graph too.
    if (const void* host = host_memory(request.steps[i])) out.key.addresses.push_back(host);
    out.workspace_bytes = std::max(out.workspace_bytes, step.workspace_bytes);
  }
  return out;
}

// Each handle the steps name, in step order, null ones included.
std::vector<BufferHandle> handles_of(const RunRecorded& request) {
  std::vector<BufferHandle> handles;
  for (const RecordedStep& step : request.steps)
    for_each_buffer(step, [&](const BufferHandle& h) { handles.push_back(h); });
  return handles;
}

// Whether the steps name `handles`, in order (handles_of, without making a vector each launch).
bool names_handles(const RunRecorded& request, const std::vector<BufferHandle>& handles) {
  std::size_t next = 0;
  bool same = true;
  for (const RecordedStep& step : request.steps) {
    for_each_buffer(step, [&](const BufferHandle& h) {
      same = same && next < handles.size() && handles[next] == h;
      ++next;
    });
  }
  return same && next == handles.size();
}

// Appends each host copy's memory, in step order.
void append_host_memory(const RunRecorded& request, std::vector<const void*>& addresses) {
  for (const RecordedStep& step : request.steps) {
    if (const void* host = host_memory(step)) addresses.push_back(host);
  }
}

// What a launch that checked every step found, for the next launch of the recording to compare with.
RecordedGraphs::CheckedBuffers checked_buffers(RunRecorded& request, std::vector<const void*> addresses,
                                               std::span<const CudaStream::Use> uses) {
  RecordedGraphs::CheckedBuffers checked{.handles = handles_of(request), .addresses = std::move(addresses)};
  for (const CudaStream::Use& use : uses) checked.uses.emplace_back(use.buffer, use.access);
  return checked;
}

}  // namespace

Result<std::optional<Submitted>> CudaStream::launch_checked(RunRecorded& request, std::uint64_t workspace_bytes) {
  const RecordedGraphs::CheckedBuffers* checked = recorded_.checked_buffers(request.recording);
  if (checked == nullptr || !names_handles(request, checked->handles)) return std::nullopt;
  for (const RecordedStep& step : request.steps) {  // host memory is checked to be pinned at every launch
    Prepared unused;
    Status pinned;
    if (const auto* upload = std::get_if<CopyToDevice>(&step)) pinned = prepare_host_copy(*upload, unused, false);
    if (const auto* download = std::get_if<CopyToHost>(&step)) pinned = prepare_host_copy(*download, unused, false);
    if (!pinned.ok()) return std::nullopt;  // the capture's path names it
  }
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_ASSIGN_OR_RETURN(std::vector<const void*> addresses, recorded_addresses(request));
  if (addresses != checked->addresses) return std::nullopt;
  void* scratch = nullptr;
  if (workspace_bytes != 0) {
    ACCEL_ASSIGN_OR_RETURN(scratch, workspace(workspace_bytes));
  }
  cudaGraphExec_t exec = recorded_.find_with_workspace(request.recording, scratch);
  if (exec == nullptr) return std::nullopt;
  std::vector<Use> uses;
  uses.reserve(checked->uses.size());
  for (const auto& [buffer, access] : checked->uses) uses.push_back({buffer, access});
  ACCEL_ASSIGN_OR_RETURN(Submitted submitted, launch_ordered(exec, uses));
  return std::optional<Submitted>(std::move(submitted));
}

Result<std::optional<Submitted>> CudaStream::launch_kept(RunRecorded& request, std::uint64_t workspace_bytes) {
  std::vector<Prepared> steps = prepare_steps(request, *this, /*with_run=*/false);
  if (std::any_of(steps.begin(), steps.end(), [](const Prepared& step) { return !step.refused.ok(); })) {
    return std::nullopt;  // the capture's path names the refusal
  }
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_ASSIGN_OR_RETURN(std::vector<const void*> addresses, recorded_addresses(request));
  Gathered gathered = gather(request, steps, *context_);
  if (!gathered.first_refused.ok()) return std::nullopt;
  void* scratch = nullptr;
  if (workspace_bytes != 0) {
    ACCEL_ASSIGN_OR_RETURN(scratch, workspace(workspace_bytes));
  }
  gathered.key.addresses.push_back(scratch);
  cudaGraphExec_t exec = recorded_.find(gathered.key);
  if (exec == nullptr) return std::nullopt;
  ACCEL_ASSIGN_OR_RETURN(Submitted submitted, launch_ordered(exec, gathered.uses));
  recorded_.remember_checked(request.recording, checked_buffers(request, std::move(addresses), gathered.uses));
  return std::optional<Submitted>(std::move(submitted));
}

Result<std::vector<const void*>> CudaStream::recorded_addresses(RunRecorded& request) {
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  std::vector<const void*> addresses;
  ACCEL_RETURN_IF_ERROR(check_recorded_buffers(context_->table(), request, &addresses));
  append_host_memory(request, addresses);
  return addresses;
}

Result<Submitted> CudaStream::launch_ordered(cudaGraphExec_t exec, std::span<const Use> uses) {
  return ordered(uses, context_->new_write_version(), [&]() -> Result<Submitted> {
    ACCEL_RETURN_IF_ERROR(check(cudaGraphLaunch(exec, stream_), "launching a recording's graph"));
    return Submitted{};
  });
}

Result<Submitted> CudaStream::enqueue(RunRecorded& request) {
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  // A kept graph is launched with its steps checked, not planned again: planning each step is most of a launch's
  // host time (PERFORMANCE.md §52).
  if (const std::optional<std::uint64_t> kept = recorded_.kept_workspace(request.recording)) {
    ACCEL_ASSIGN_OR_RETURN(std::optional<Submitted> launched, launch_checked(request, *kept));
    if (launched) return std::move(*launched);
    ACCEL_ASSIGN_OR_RETURN(launched, launch_kept(request, *kept));
    if (launched) return std::move(*launched);
  }
  std::vector<Prepared> steps = prepare_steps(request, *this, /*with_run=*/true);
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_ASSIGN_OR_RETURN(std::vector<const void*> addresses, recorded_addresses(request));
  Gathered gathered = gather(request, steps, *context_);
  RecordedGraphs::Key& key = gathered.key;
  const Status& first_refused = gathered.first_refused;
  if (gathered.runnable == 0 && !first_refused.ok()) return first_refused;  // nothing left to run
  if (!first_refused.ok()) key.recording = 0;                               // a partial graph is not kept

  const std::uint64_t write_version = context_->new_write_version();
  if (gathered.runnable == 0) {
    return ordered(std::span<const Use>(), write_version, [] { return Result<Submitted>(Submitted{}); });
  }
  const std::uint64_t workspace_bytes = gathered.workspace_bytes;
  return ordered(std::span<const Use>(gathered.uses), write_version, [&]() -> Result<Submitted> {
    void* scratch = nullptr;
    if (workspace_bytes != 0) {
      ACCEL_ASSIGN_OR_RETURN(scratch, workspace(workspace_bytes));
    }
    key.addresses.push_back(scratch);
    cudaGraphExec_t exec = recorded_.find(key);
    bool kept = true;
    if (exec == nullptr) {
      ACCEL_RETURN_IF_ERROR(check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
                                  "beginning the capture of a recording"));
      Status captured;
      for (std::size_t i = 0; i < steps.size() && captured.ok(); ++i) {
        if (!steps[i].refused.ok()) continue;
        CudaRun run{.target = *this, .write_version = write_version};
        if (steps[i].workspace_bytes != 0) {
          run.workspace = scratch;
          run.workspace_bytes = steps[i].workspace_bytes;
        }
        if (Status ran = steps[i].run(steps[i].views, run); !ran.ok()) {
          captured = step_failure(i, request.steps[i], ran);
        }
      }
      cudaGraph_t graph = nullptr;
      const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
      if (captured.ok() && ended != cudaSuccess) captured = check(ended, "ending the capture of a recording");
      if (!captured.ok()) {
        if (graph != nullptr) (void)cudaGraphDestroy(graph);
        recorded_.count_failed_capture();
        (void)cudaGetLastError();  // a refused capture is not the next request's error
        return captured;
      }
      Result<cudaGraphExec_t> instantiated = recorded_.instantiate(key, graph, workspace_bytes, kept);
      (void)cudaGraphDestroy(graph);
      ACCEL_RETURN_IF_ERROR(instantiated.status());
      exec = *instantiated;
    }
    const Status launched = check(cudaGraphLaunch(exec, stream_), "launching a recording's graph");
    if (!kept) (void)cudaGraphExecDestroy(exec);  // freed when the launch finishes
    ACCEL_RETURN_IF_ERROR(launched);
    if (kept) recorded_.remember_checked(key.recording, checked_buffers(request, std::move(addresses), gathered.uses));
    Submitted submitted;
    if (!first_refused.ok()) {
      submitted.check = [first_refused](std::span<const std::byte>) { return first_refused; };
    }
    return submitted;
  });
}

}  // namespace accel::device::cuda

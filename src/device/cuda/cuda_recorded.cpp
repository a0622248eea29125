// CudaStream's RunRecorded (include/accel/device/run_recorded.hpp): every step validated, planned and resolved
// (recorded_preparation.hpp), the stream ordered after every buffer's earlier users and the workspace taken, all
// before the capture; then only the steps' run steps are captured, into one CUDA graph kept per recording
// (recorded_graphs.hpp) and launched. Consecutive steps whose contract links them are captured as one run of theirs
// (operation/cuda_operation.hpp: a chain of small GEMMs is one launch). A recording whose graph is kept is launched
// with its steps validated and resolved but not planned, when its addresses and workspace are those the graph was
// captured over: a recording's id names its steps, so their plans are those of the capture.
#include <fmt/format.h>

#include <algorithm>
#include <any>
#include <optional>
#include <vector>

#include "device/cuda/cuda_resources.hpp"
#include "device/cuda/cuda_stream.hpp"
#include "device/cuda/recorded_preparation.hpp"
#include "device/recorded_steps.hpp"

namespace accel::device::cuda {
namespace {

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
    // A host copy's memory, and the registration it lies in, are its graph's too.
    if (is_host_copy(request.steps[i])) {
      out.key.host_memory.push_back({.data = host_memory(request.steps[i]), .allocation = step.host_allocation});
    }
    out.workspace_bytes = std::max(out.workspace_bytes, step.workspace_bytes);
  }
  return out;
}

// Each handle the steps name, in step order, null ones included.
std::vector<BufferHandle> handles_of(const RecordedSteps& steps) {
  std::vector<BufferHandle> handles;
  for (const RecordedStep& step : steps) for_each_buffer(step, [&](const BufferHandle& h) { handles.push_back(h); });
  return handles;
}

// The index of each host copy among `steps`.
std::vector<std::size_t> host_copies_of(const RecordedSteps& steps) {
  std::vector<std::size_t> copies;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (is_host_copy(steps[i])) copies.push_back(i);
  }
  return copies;
}

// Whether the host copies of `steps` at `copies` are still allowed, each with its memory where, and in the
// allocation, `was` says.
bool same_host_memory(const RecordedSteps& steps, std::span<const std::size_t> copies,
                      std::span<const HostMemoryUse> was) {
  if (copies.size() != was.size()) return false;
  for (std::size_t k = 0; k < copies.size(); ++k) {
    if (checked_host_memory(steps[copies[k]]) != was[k]) return false;
  }
  return true;
}

// What a launch that checked every step found, for the next launch of the recording to compare with: `addresses`
// as they resolved while `table` had `layout` (taken with them, before any step ran), with the buffers' lock held.
RecordedGraphs::CheckedBuffers checked_buffers(RunRecorded& request, std::vector<const void*> addresses,
                                               std::uint64_t layout, std::span<const CudaStream::Use> uses,
                                               const BufferTable& table) {
  RecordedGraphs::CheckedBuffers checked{.addresses = std::move(addresses),
                                         .uses = {uses.begin(), uses.end()},
                                         .steps = request.steps,
                                         .host_copies = host_copies_of(request.steps),
                                         .layout = layout};
  const std::vector<BufferHandle> handles = handles_of(request.steps);
  checked.imported = std::any_of(handles.begin(), handles.end(),
                                 [&](const BufferHandle& handle) { return table.is_imported(handle); });
  return checked;
}

}  // namespace

Result<std::optional<Submitted>> CudaStream::launch_checked(RunRecorded& request, std::uint64_t workspace_bytes) {
  RecordedGraphs::CheckedBuffers* checked = recorded_.checked_buffers(request.recording);
  if (checked == nullptr) return std::nullopt;
  // A Recording sends the same steps at each launch until it is bound again (RecordedSteps shares them); `checked`
  // holds the ones it checked, so no other list can lie where they do.
  const bool same_steps =
      request.steps.begin() == checked->steps.begin() && request.steps.size() == checked->steps.size();
  // Another list (a rebind, perhaps back to the same buffers) must name the same handles.
  if (!same_steps && handles_of(request.steps) != handles_of(checked->steps)) return std::nullopt;
  // Host memory is looked at every launch: still pinned, in the allocation or registration the graph was captured
  // over (the capture's path names a refusal). Of the same list only its host copies: looking at every step again cost
  // a replay of 20 GEMMs and an FFT 0.2 µs (PERFORMANCE.md §111).
  std::vector<std::size_t> other_copies;
  if (!same_steps) other_copies = host_copies_of(request.steps);
  const std::vector<std::size_t>& copies = same_steps ? checked->host_copies : other_copies;
  if (!same_host_memory(request.steps, copies, recorded_.kept_host_memory(request.recording))) return std::nullopt;
  std::lock_guard lock(context_->buffers_mutex());
  // Resolving every handle again took a replay of 20 GEMMs and an FFT 2 µs of its 22 on an H100's host (PERFORMANCE.md
  // §110); with no buffer removed or moved since the last check, each resolves as it did then.
  if (same_steps && !checked->imported && checked->layout == context_->table().layout()) {
    ACCEL_RETURN_IF_ERROR(context_->check_healthy());  // as recorded_addresses checks it otherwise
  } else {
    ACCEL_ASSIGN_OR_RETURN(std::vector<const void*> addresses, recorded_addresses(request));
    if (addresses != checked->addresses) return std::nullopt;
    checked->steps = request.steps;
    checked->layout = context_->table().layout();
  }
  void* scratch = nullptr;
  if (workspace_bytes != 0) {
    ACCEL_ASSIGN_OR_RETURN(scratch, workspace(workspace_bytes));
  }
  cudaGraphExec_t exec = recorded_.find_with_workspace(request.recording, scratch);
  if (exec == nullptr) return std::nullopt;
  ACCEL_ASSIGN_OR_RETURN(Submitted submitted, launch_ordered(exec, checked->uses));
  return std::optional<Submitted>(std::move(submitted));
}

Result<std::optional<Submitted>> CudaStream::launch_kept(RunRecorded& request, std::uint64_t workspace_bytes) {
  std::vector<Prepared> steps = prepare_steps(request, *this, /*with_run=*/false);
  if (std::any_of(steps.begin(), steps.end(), [](const Prepared& step) { return !step.refused.ok(); })) {
    return std::nullopt;  // the capture's path names the refusal
  }
  std::lock_guard lock(context_->buffers_mutex());
  ACCEL_ASSIGN_OR_RETURN(std::vector<const void*> addresses, recorded_addresses(request));
  const std::uint64_t layout = context_->table().layout();
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
  recorded_.remember_checked(request.recording,
                             checked_buffers(request, std::move(addresses), layout, gathered.uses, context_->table()));
  return std::optional<Submitted>(std::move(submitted));
}

Result<std::vector<const void*>> CudaStream::recorded_addresses(RunRecorded& request) {
  ACCEL_RETURN_IF_ERROR(context_->check_healthy());
  std::vector<const void*> addresses;
  ACCEL_RETURN_IF_ERROR(check_recorded_buffers(context_->table(), request, &addresses));
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
  const std::uint64_t layout = context_->table().layout();
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
      for (std::size_t i = 0; i < steps.size() && captured.ok();) {
        if (!steps[i].refused.ok()) {
          ++i;
          continue;
        }
        CudaRun run{.target = *this, .write_version = write_version};
        if (const std::vector<std::any> links = links_from(steps, i); !links.empty()) {
          if (Status ran = steps[i].run_linked(links, run); !ran.ok())
            captured = step_failure(i, request.steps[i], ran);
          i += links.size();
          continue;
        }
        if (steps[i].workspace_bytes != 0) {
          run.workspace = scratch;
          run.workspace_bytes = steps[i].workspace_bytes;
        }
        if (Status ran = steps[i].run(steps[i].views, run); !ran.ok()) {
          captured = step_failure(i, request.steps[i], ran);
        }
        ++i;
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
    if (kept) {
      recorded_.remember_checked(
          key.recording, checked_buffers(request, std::move(addresses), layout, gathered.uses, context_->table()));
    }
    Submitted submitted;
    if (!first_refused.ok()) {
      submitted.check = [first_refused](std::span<const std::byte>) { return first_refused; };
    }
    return submitted;
  });
}

}  // namespace accel::device::cuda

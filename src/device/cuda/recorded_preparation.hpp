// A recording's steps on a CUDA stream before its capture (cuda_recorded.cpp): each checked and planned through its
// contract (or as a copy), with the run step the capture makes, and the runs of steps whose contract links them.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "accel/device/run_recorded.hpp"
#include "device/cuda/buffer_use.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::device::cuda {

// One step, checked and planned: what the capture runs, over the views resolved for it.
struct Prepared {
  Status refused;  // its own checks' failure: the step is left out, as the CPU device skips it
  Operands operands;
  std::vector<BufferView> views;
  std::uint64_t workspace_bytes = 0;
  std::function<Status(std::span<const BufferView>, CudaRun&)> run;
  std::uint64_t host_allocation = 0;  // a host copy's: the CUDA allocation its memory lies in (HostMemoryUse)
  // Where its contract links steps (CudaOperation::Link): its link over its views (none: it runs alone), and the run
  // of several links of that contract, which also names the contract (steps of two contracts are never linked).
  std::function<std::optional<std::any>(std::span<const BufferView>)> link;
  Status (*run_linked)(std::span<const std::any>, CudaRun&) = nullptr;
};

// Every step prepared, with its run step or (`with_run` false) only checked; a step's failure is its `refused`.
[[nodiscard]] std::vector<Prepared> prepare_steps(const RunRecorded& request, CudaTarget& target, bool with_run);

// The links of the steps from `first` on that run as one launch: consecutive, runnable steps of one contract that
// links them, needing no workspace, each with a link over its views. Fewer than two: none.
[[nodiscard]] std::vector<std::any> links_from(const std::vector<Prepared>& steps, std::size_t first);

// Whether a step copies from or into host memory.
[[nodiscard]] bool is_host_copy(const RecordedStep& step) noexcept;

// The host memory a step copies from or into, or null for a step that is not a host copy.
[[nodiscard]] const void* host_memory(const RecordedStep& step);

// A host copy checked as its capture checks it (its memory pinned from end to end, in one allocation or
// registration), and that memory; nullopt where it is refused (the capture's path names why) or not a host copy.
[[nodiscard]] std::optional<HostMemoryUse> checked_host_memory(const RecordedStep& step);

}  // namespace accel::device::cuda

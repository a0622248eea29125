// The collective requests on a CUDA stream, through NCCL (nccl_comm.hpp): InitComm and DestroyComm make and end
// the device's communicator; Collective and Group launch on the request's stream after the buffers' earlier users,
// like any request, and complete with the outcome the watchdog gives them.
#pragma once

#include <memory>

#include "libs/collective/collective_operation.hpp"
#include "libs/collective/nccl_comm.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<collective::InitComm> {
  struct Plan {};
  using Checked = Operation<collective::InitComm>::Checked;
  static Result<Plan> plan(const collective::InitComm&, const Checked&, CudaTarget&) { return Plan{}; }
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static Status run(const collective::InitComm& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

template <>
struct CudaOperation<collective::DestroyComm> {
  struct Plan {};
  using Checked = Operation<collective::DestroyComm>::Checked;
  static Result<Plan> plan(const collective::DestroyComm&, const Checked&, CudaTarget&) { return Plan{}; }
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static Status run(const collective::DestroyComm& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

// The communicator the steps run on, found and checked (its ranks, the dtypes NCCL has) before anything launches.
struct CollectivePlan {
  std::shared_ptr<collective::NcclComm> comm;
};

template <>
struct CudaOperation<collective::Collective> {
  using Plan = CollectivePlan;
  using Checked = Operation<collective::Collective>::Checked;
  static Result<Plan> plan(const collective::Collective& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static Status run(const collective::Collective& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report);
};

template <>
struct CudaOperation<collective::Group> {
  using Plan = CollectivePlan;
  using Checked = Operation<collective::Group>::Checked;
  static Result<Plan> plan(const collective::Group& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static Status run(const collective::Group& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

}  // namespace accel

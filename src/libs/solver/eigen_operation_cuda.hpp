// solver::Syevd on a CUDA stream: cuSOLVER's syevd, one launch per matrix of the batch, the infos checked at
// completion (cusolver_dense.hpp).
#pragma once

#include "libs/solver/cusolver_dense.hpp"
#include "libs/solver/eigen_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<solver::Syevd> {
  using Plan = solver::DensePlan;
  using Checked = Operation<solver::Syevd>::Checked;

  static Result<Plan> plan(const solver::Syevd& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes(); }
  static std::uint64_t host_result_bytes(const Plan& plan) { return plan.host_bytes; }
  static Status run(const solver::Syevd& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { solver::describe_cusolver(target, report); }
};

}  // namespace accel

// solver::Getrf and solver::Getrs on a CUDA stream: cuSOLVER's getrf and getrs (S, D, C or Z by the dtype), one
// launch per matrix of the batch, the infos checked at completion (cusolver_dense.hpp). Getrs's pivots are checked
// on the device first (pivot_kernel.hpp): one outside 1..n is refused with invalid_argument, as on the CPU, and
// getrs never runs.
#pragma once

#include "libs/solver/cusolver_dense.hpp"
#include "libs/solver/lu_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<solver::Getrf> {
  using Plan = solver::DensePlan;
  using Checked = Operation<solver::Getrf>::Checked;

  static Result<Plan> plan(const solver::Getrf& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes(); }
  static std::uint64_t host_result_bytes(const Plan& plan) { return plan.host_bytes; }
  static Status run(const solver::Getrf& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { solver::describe_cusolver(target, report); }
};

template <>
struct CudaOperation<solver::Getrs> {
  using Plan = solver::DensePlan;
  using Checked = Operation<solver::Getrs>::Checked;

  static Result<Plan> plan(const solver::Getrs& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes(); }
  static std::uint64_t host_result_bytes(const Plan& plan) { return plan.host_bytes; }
  static Status run(const solver::Getrs& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { solver::describe_cusolver(target, report); }
};

}  // namespace accel

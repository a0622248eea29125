// solver::Potrf and solver::Potrs on a CUDA stream (S, D, C or Z by the dtype): cuSOLVER's potrfBatched for a batch of
// Potrf, potrf and potrs one launch per matrix otherwise, the infos checked at completion (cusolver_dense.hpp).
#pragma once

#include "libs/solver/cholesky_operation.hpp"
#include "libs/solver/cusolver_dense.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<solver::Potrf> {
  using Plan = solver::DensePlan;
  using Checked = Operation<solver::Potrf>::Checked;

  static Result<Plan> plan(const solver::Potrf& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes(); }
  static std::uint64_t host_result_bytes(const Plan& plan) { return plan.host_bytes; }
  static Status run(const solver::Potrf& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { solver::describe_cusolver(target, report); }
};

template <>
struct CudaOperation<solver::Potrs> {
  using Plan = solver::DensePlan;
  using Checked = Operation<solver::Potrs>::Checked;

  static Result<Plan> plan(const solver::Potrs& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes(); }
  static std::uint64_t host_result_bytes(const Plan& plan) { return plan.host_bytes; }
  static Status run(const solver::Potrs& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { solver::describe_cusolver(target, report); }
};

}  // namespace accel

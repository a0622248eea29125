// solver::Geqrf, solver::Orgqr and solver::Ormqr on a CUDA stream. Real matrices of at most 256 rows (Ormqr: from the
// left) run the family's kernels (qr_kernel.hpp), which have no infos to report; the rest is cuSOLVER's geqrf, orgqr
// and ormqr, one launch per matrix of the batch, the infos (illegal arguments only) checked at completion
// (cusolver_dense.hpp).
#pragma once

#include "libs/solver/cusolver_dense.hpp"
#include "libs/solver/qr_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<solver::Geqrf> {
  using Plan = solver::DensePlan;
  using Checked = Operation<solver::Geqrf>::Checked;

  static Result<Plan> plan(const solver::Geqrf& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes(); }
  static std::uint64_t host_result_bytes(const Plan& plan) { return plan.host_bytes; }
  static Status run(const solver::Geqrf& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { solver::describe_cusolver(target, report); }
};

template <>
struct CudaOperation<solver::Orgqr> {
  using Plan = solver::DensePlan;
  using Checked = Operation<solver::Orgqr>::Checked;

  static Result<Plan> plan(const solver::Orgqr& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes(); }
  static std::uint64_t host_result_bytes(const Plan& plan) { return plan.host_bytes; }
  static Status run(const solver::Orgqr& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { solver::describe_cusolver(target, report); }
};

template <>
struct CudaOperation<solver::Ormqr> {
  using Plan = solver::DensePlan;
  using Checked = Operation<solver::Ormqr>::Checked;

  static Result<Plan> plan(const solver::Ormqr& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes(); }
  static std::uint64_t host_result_bytes(const Plan& plan) { return plan.host_bytes; }
  static Status run(const solver::Ormqr& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { solver::describe_cusolver(target, report); }
};

}  // namespace accel

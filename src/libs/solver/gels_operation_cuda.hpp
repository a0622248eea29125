// solver::Gels on a CUDA stream: per matrix of the batch, geqrf of A and ormqr of B (Qᵀ B) — the family's kernels
// (qr_kernel.hpp) up to 256 rows, cuSOLVER's above —, then R X = (Qᵀ B)'s top by cuSOLVER's getrs on a copy of R with
// identity pivots (gels_kernel.hpp), the copy's kernel also checking R's diagonal for LAPACK's info. Not cuBLAS's
// trsm: cuBLAS is not linked. Not cuSOLVER's own gels (the iterative refinement solver's <t><t>gels): it writes X to a
// buffer of its own rather than into B, has an iteration count to hand back, and gives no rank check of R that would
// make LAPACK's info, so that a rank deficient A would come back as NaNs. What this way costs: a workspace of n x n
// elements beside the work area, and getrs's unit lower solve (the identity, O(n² nrhs)) next to geqrf's O(m n²).
#pragma once

#include "libs/solver/cusolver_dense.hpp"
#include "libs/solver/gels_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<solver::Gels> {
  using Plan = solver::DensePlan;
  using Checked = Operation<solver::Gels>::Checked;

  static Result<Plan> plan(const solver::Gels& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes(); }
  static std::uint64_t host_result_bytes(const Plan& plan) { return plan.host_bytes; }
  static Status run(const solver::Gels& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { solver::describe_cusolver(target, report); }
};

}  // namespace accel

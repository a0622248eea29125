// solver::Gels on a CUDA stream, by cuSOLVER's routines alone (cuBLAS is not linked, and cuSOLVER's own gels, the
// iterative refinement solver's <t><t>gels, writes X to a buffer of its own, hands its iteration count to the host
// and reports no rank deficiency): per matrix of the batch, geqrf of A, ormqr of B (Qᵀ B), then R X = (Qᵀ B)'s top
// by getrs on a copy of R with identity pivots (gels_kernel.hpp), which also checks R's diagonal for LAPACK's info.
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

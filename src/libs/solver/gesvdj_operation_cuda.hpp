// solver::Gesvdj on a CUDA stream: the family's own one-sided Jacobi kernel for square matrices of at most 32 x 32
// (jacobi_svd_kernel.hpp); else cuSOLVER's gesvdjBatched, one launch for the batch, where the matrices are packed
// and at most 32 x 32 with their vectors (full, or thin of square matrices); else gesvdj, one launch per matrix. The
// tolerance and sweeps go through the stream's gesvdjInfo_t, the infos are checked at completion
// (cusolver_dense.hpp).
#pragma once

#include "libs/solver/cusolver_dense.hpp"
#include "libs/solver/gesvdj_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

namespace solver {
struct GesvdjPlan {
  DensePlan dense;
  gesvdjInfo_t params = nullptr;  // the stream's
  bool batched = false;           // gesvdjBatched, else gesvdj per matrix
  bool kernel = false;            // the family's own (jacobi_svd_kernel.hpp), neither
};
}  // namespace solver

template <>
struct CudaOperation<solver::Gesvdj> {
  using Plan = solver::GesvdjPlan;
  using Checked = Operation<solver::Gesvdj>::Checked;

  static Result<Plan> plan(const solver::Gesvdj& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.dense.workspace_bytes(); }
  static std::uint64_t host_result_bytes(const Plan& plan) { return plan.dense.host_bytes; }
  static Status run(const solver::Gesvdj& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { solver::describe_cusolver(target, report); }
};

}  // namespace accel

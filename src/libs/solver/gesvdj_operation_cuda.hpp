// solver::Gesvdj on a CUDA stream: the family's own one-sided Jacobi kernels for square matrices, a block per matrix
// of at most 32 x 32 (jacobi_svd_kernel.hpp), a cluster of blocks per matrix of at most 256 x 256
// (block_jacobi_svd_kernel.hpp); else cuSOLVER's gesvdjBatched, one launch for the batch, where the matrices are
// packed and at most 32 x 32 with their vectors (full, or thin of square matrices); else gesvdj, one launch per
// matrix. The tolerance and sweeps go through the stream's gesvdjInfo_t, the infos are checked at completion
// (cusolver_dense.hpp).
#pragma once

#include "libs/solver/cusolver_dense.hpp"
#include "libs/solver/gesvdj_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

namespace solver {
enum class JacobiPath : std::uint8_t {
  looped,         // cuSOLVER's gesvdj per matrix
  batched,        // cuSOLVER's gesvdjBatched
  block_kernel,   // the family's, a block per matrix (jacobi_svd_kernel.hpp)
  cluster_kernel  // the family's, a cluster per matrix (block_jacobi_svd_kernel.hpp)
};
struct GesvdjPlan {
  DensePlan dense;
  gesvdjInfo_t params = nullptr;  // the stream's, for cuSOLVER's paths
  JacobiPath path = JacobiPath::looped;
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

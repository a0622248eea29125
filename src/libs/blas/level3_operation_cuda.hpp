// blas::Trsm, Syrk, Symm, Trmm and Geam on a CUDA stream, one call per matrix of a batch (cuBLAS has no strided-
// batched form of them; its trsmBatched takes arrays of pointers): Trsm, Syrk and Geam are cuBLAS's routines of those
// names on the stream's handle (cublas_state.hpp), large Trsms by blocks (below); Symm and smaller Trmms a GEMM
// (below); larger Trmms cuBLAS's trmm, given B as its out-of-place C, which cuBLAS documents as in place.
#pragma once

#include "libs/blas/cublas_state.hpp"
#include "libs/blas/level3_operation.hpp"

namespace accel {

// Trsm runs by blocks from a triangular order of kByBlocksFrom with kByBlocksRhsFrom right-hand sides or more: split
// along the order down to blocks of blas::triangular_solve_order, each solved by a kernel of ours, the coupling between
// the halves of each split taken out by a GEMM (cuBLAS's, or for f32 products of at most 512 x 64 outputs
// launch_small_gemm), which does nearly all the work. On the H200 that ran every type and side 1.16-2.04x faster than
// PyTorch's solve_triangular from order 256, and faster than cuBLAS's trsm (PERFORMANCE.md §89, §90). Narrower B stays
// cuBLAS's: not measured by blocks.
template <>
struct CudaOperation<blas::Trsm> : blas::CublasOperation {
  using Checked = Operation<blas::Trsm>::Checked;
  static constexpr std::int64_t kByBlocksFrom = 256;
  static constexpr std::int64_t kByBlocksRhsFrom = 256;
  // The cuBLAS handle, and by blocks the diagonal-block kernels' shared memory allowed before any capture.
  static Result<Plan> plan(const blas::Trsm&, const Checked& checked, CudaTarget& target);
  static Status run(const blas::Trsm& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  // Whether the members of `request` run by blocks.
  [[nodiscard]] static bool by_blocks(const blas::Trsm& request) noexcept;
};

template <>
struct CudaOperation<blas::Syrk> : blas::CublasOperation {
  using Checked = Operation<blas::Syrk>::Checked;
  static Result<Plan> plan(const blas::Syrk&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Syrk& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

namespace blas {
// A Symm or Trmm planned: the stream's cuBLAS, and whether it runs as one GEMM on A made whole (blas_kernels.hpp),
// with the workspace one member takes, or as cuBLAS's routine of its name.
struct WholeMatrixPlan {
  CublasPlan cublas;
  bool by_gemm = false;
  std::uint64_t workspace_bytes = 0;
};
}  // namespace blas

// Symm from an order of kByGemmFrom is a GEMM on A made whole (its stored triangle mirrored into the workspace by a
// kernel of our own): cuBLAS's symm ran 1.3x slower than its GEMM at 4096 and 3x at 1024 on the H200; below, cuBLAS's
// symm, faster than the mirror and GEMM at 256 (PERFORMANCE.md §52).
template <>
struct CudaOperation<blas::Symm> {
  using Checked = Operation<blas::Symm>::Checked;
  static constexpr std::int64_t kByGemmFrom = 512;
  using Plan = blas::WholeMatrixPlan;  // by GEMM: one member's A, whole
  static Result<Plan> plan(const blas::Symm& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes; }
  static Status run(const blas::Symm& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { blas::CublasOperation::describe(target, report); }
};

// Trmm below an order of kByGemmBelow is a GEMM too, on A made whole (zeros outside its triangle) and a copy of B:
// on the H200 cuBLAS's trmm took 175 µs at 1024 and 494 at 2048, this 68 and 375. From it, cuBLAS's trmm, which
// beat PyTorch's GEMM at 4096 (2,129 against 2,676 µs) and matched it at 3072; the threshold lies between 2048 and
// 4096 (PERFORMANCE.md §52).
template <>
struct CudaOperation<blas::Trmm> {
  using Checked = Operation<blas::Trmm>::Checked;
  static constexpr std::int64_t kByGemmBelow = 3072;
  using Plan = blas::WholeMatrixPlan;  // by GEMM: one member's A whole and B's copy
  static Result<Plan> plan(const blas::Trmm& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes; }
  static Status run(const blas::Trmm& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { blas::CublasOperation::describe(target, report); }
};

template <>
struct CudaOperation<blas::Geam> : blas::CublasOperation {
  using Checked = Operation<blas::Geam>::Checked;
  static Result<Plan> plan(const blas::Geam&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Geam& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

}  // namespace accel

// BLAS level 2 on a CUDA stream, on the stream's handle (cublas_state.hpp): Gemv is a kernel of our own for small
// matrices of every dtype, beyond them the streamed kernels of ours for f32 and 16-bit elements whose columns are
// 16-byte aligned (not 16-bit matrices of 128 MiB or more), else cuBLAS's gemv, or gemvStridedBatched for a batch (one
// launch; HSH or TST strided-batched on 16 bits); Trsv is a cuBLAS call per member of a batch; Ger and Symv are kernels
// of our own (blas_kernels.hpp).
#pragma once

#include "libs/blas/blas_kernels.hpp"
#include "libs/blas/cublas_state.hpp"
#include "libs/blas/level2_operation.hpp"

namespace accel {

namespace blas {
// A Gemv planned: the stream's cuBLAS, and for an f32 or 16-bit one beyond the small kernel's bounds the streamed
// kernels' split (blas_kernels.hpp), whose workspace the run gets.
struct GemvPlan {
  CublasPlan cublas;
  StreamedGemvSplit streamed;
};
}  // namespace blas

// A 16-bit Gemv of kNarrowOnCublasFrom elements a matrix (128 MiB) or more runs on cuBLAS's HSH or TST gemv: on the
// H100 the streamed kernels moved 8,192² in 51.2-52.3 µs where cuBLAS took 47.6-49.2 through accel (PyTorch 48.6), and
// 16,384² A x in 190 against 177.6 (PERFORMANCE.md §99); Aᵀ x at 16,384² was the one size where they led (182 / 186).
template <>
struct CudaOperation<blas::Gemv> {
  using Checked = Operation<blas::Gemv>::Checked;
  using Plan = blas::GemvPlan;
  static constexpr std::int64_t kNarrowOnCublasFrom = std::int64_t{1} << 26;
  static Result<Plan> plan(const blas::Gemv& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.streamed.workspace_bytes; }
  static Status run(const blas::Gemv& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { blas::CublasOperation::describe(target, report); }
};

// Ger is one launch of our own for any batch, where cuBLAS's routine took a call per member: nothing to plan.
template <>
struct CudaOperation<blas::Ger> {
  struct Plan {};
  using Checked = Operation<blas::Ger>::Checked;
  static Result<Plan> plan(const blas::Ger&, const Checked&, CudaTarget&) { return Plan{}; }
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static Status run(const blas::Ger& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

template <>
struct CudaOperation<blas::Trsv> : blas::CublasOperation {
  using Checked = Operation<blas::Trsv>::Checked;
  static Result<Plan> plan(const blas::Trsv&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Trsv& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

// Symv is a kernel of our own (blas_kernels.hpp): cuBLAS's symv moved A at about half the rate a GEMV does.
template <>
struct CudaOperation<blas::Symv> {
  using Checked = Operation<blas::Symv>::Checked;
  // How many members of a batch one launch takes, and the workspace of their tiles' sums.
  using Plan = blas::SymvBatching;
  static Result<Plan> plan(const blas::Symv& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes; }
  static Status run(const blas::Symv& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

}  // namespace accel

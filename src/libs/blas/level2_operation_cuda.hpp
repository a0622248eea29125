// BLAS level 2 on a CUDA stream, on the stream's handle (cublas_state.hpp): Gemv is a kernel of our own for small
// matrices of every dtype, beyond them the streamed kernels of ours for f32 and 16-bit elements whose columns are
// 16-byte aligned (not 16-bit matrices past 4,096² for A x, 50M elements for Aᵀ x), else cuBLAS's gemv, or
// gemvStridedBatched for a batch (one launch; HSH or TST strided-batched on 16 bits); Trsv is a cuBLAS call per member
// of a batch; Ger and Symv are kernels of our own (blas_kernels.hpp).
#pragma once

#include <optional>

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

// A 16-bit Gemv of more than kNarrowOnCublasAbove elements a matrix (A x) or kNarrowTransposedOnCublasAbove (Aᵀ x)
// runs on cuBLAS's HSH or TST gemv. On the H100, pipelined, in turns (PERFORMANCE.md §99): A x at 5,120² 21.6-22.4 µs
// on cuBLAS against 23.2 on the streamed kernels (PyTorch 21.6-22.6), 7,168² 43.7-44.1 against 46.3-46.5, 8,192²
// 47.6-48.0 against 51.2-51.4, 16,384² 177.5-177.9 against 190; at 4,096² cuBLAS through accel took 12.5-17.2 against
// 12.0-12.6. Aᵀ x: the streamed kernels led at 5,120² and 6,144² (20.9-21.2, 28.4-28.5 against 22.3-22.9, 30.4-31.6
// raw) and at 16,384², cuBLAS at 7,168² (41.8-41.9 against 43.7-44.1) and 8,192² (48.5-49.2 against 51.8-52.3).
template <>
struct CudaOperation<blas::Gemv> {
  using Checked = Operation<blas::Gemv>::Checked;
  using Plan = blas::GemvPlan;
  static constexpr std::int64_t kNarrowOnCublasAbove = std::int64_t{1} << 24;            // 4,096²
  static constexpr std::int64_t kNarrowTransposedOnCublasAbove = std::int64_t{3} << 24;  // between 6,144² and 7,168²
  static Result<Plan> plan(const blas::Gemv& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.streamed.workspace_bytes; }
  static Status run(const blas::Gemv& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { blas::CublasOperation::describe(target, report); }
};

// Ger is one launch of our own for any batch, where cuBLAS's routine took a call per member: nothing to plan.
// Gers link: a burst or a recording of single updates runs as chains of one launch each (blas::launch_ger_chain).
template <>
struct CudaOperation<blas::Ger> {
  struct Plan {};
  using Checked = Operation<blas::Ger>::Checked;
  static Result<Plan> plan(const blas::Ger&, const Checked&, CudaTarget&) { return Plan{}; }
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static Status run(const blas::Ger& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  using Link = blas::GerLaunch;
  static std::optional<Link> link(const blas::Ger& request, const Checked& checked, const Plan& plan,
                                  std::span<const BufferView> views);
  static Status run_linked(std::span<const Link> links, CudaRun& run);
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

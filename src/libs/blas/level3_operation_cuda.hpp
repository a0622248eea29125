// blas::Trsm, Syrk, Trmm and Geam on a CUDA stream: cuBLAS's routines of those names on the stream's handle
// (cublas_state.hpp), one call per matrix of a batch (cuBLAS has no strided-batched form of them; its trsmBatched
// takes arrays of pointers). Trmm passes B as cuBLAS's out-of-place C, which cuBLAS documents as in place.
#pragma once

#include "libs/blas/cublas_state.hpp"
#include "libs/blas/level3_operation.hpp"

namespace accel {

template <>
struct CudaOperation<blas::Trsm> : blas::CublasOperation {
  using Checked = Operation<blas::Trsm>::Checked;
  static Result<Plan> plan(const blas::Trsm&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Trsm& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

template <>
struct CudaOperation<blas::Syrk> : blas::CublasOperation {
  using Checked = Operation<blas::Syrk>::Checked;
  static Result<Plan> plan(const blas::Syrk&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Syrk& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

// Symm is a GEMM on A made whole (its stored triangle mirrored into the workspace by a kernel of our own): cuBLAS's
// symm ran 1.3x slower than its GEMM of the same size.
template <>
struct CudaOperation<blas::Symm> {
  using Checked = Operation<blas::Symm>::Checked;
  struct Plan {
    blas::CublasPlan cublas;
    std::uint64_t mirror_bytes = 0;  // one member's A, whole
  };
  static Result<Plan> plan(const blas::Symm& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.mirror_bytes; }
  static Status run(const blas::Symm& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { blas::CublasOperation::describe(target, report); }
};

template <>
struct CudaOperation<blas::Trmm> : blas::CublasOperation {
  using Checked = Operation<blas::Trmm>::Checked;
  static Result<Plan> plan(const blas::Trmm&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Trmm& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

template <>
struct CudaOperation<blas::Geam> : blas::CublasOperation {
  using Checked = Operation<blas::Geam>::Checked;
  static Result<Plan> plan(const blas::Geam&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Geam& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

}  // namespace accel

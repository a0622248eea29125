// blas::Trsm and blas::Syrk on a CUDA stream: cuBLAS's trsm and syrk on the stream's handle (cublas_state.hpp), one
// call per matrix of a batch (cuBLAS has no strided-batched form of either; its trsmBatched takes arrays of
// pointers).
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

}  // namespace accel

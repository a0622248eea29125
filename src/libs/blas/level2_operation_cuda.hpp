// blas::Gemv on a CUDA stream: cuBLAS's gemv, or gemvStridedBatched for a batch (one launch), on the stream's handle
// (cublas_state.hpp).
#pragma once

#include "libs/blas/cublas_state.hpp"
#include "libs/blas/level2_operation.hpp"

namespace accel {

template <>
struct CudaOperation<blas::Gemv> : blas::CublasOperation {
  using Checked = Operation<blas::Gemv>::Checked;
  static Result<Plan> plan(const blas::Gemv&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Gemv& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

}  // namespace accel

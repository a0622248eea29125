// Cholesky factorisation of small real matrices by kernels of the family's own, for Potrf on CUDA. A matrix is
// factored in panels of 32 columns, one launch per panel over (matrix, column block): the first block of a matrix
// subtracts the panel before's product from its panel and factors it (the diagonal block by one warp, a row per lane,
// four columns a step; the rows below by a triangular solve each, a row per thread in registers); the others subtract
// the panel before's product from the trailing columns, 16 at a time, so each panel waits on one launch, not two. On
// an H100 this beats potrfBatched on batches and cuSOLVER's potrf on one matrix (docs/PERFORMANCE.md, sections 19 and
// 22), which is what cholesky_operation_cuda.cpp chooses by. The result is LAPACK's: L (or U = Lᵀ) in the fill's
// triangle, the other untouched, info the order of the first leading minor that is not positive definite, or 0; as
// in LAPACK, the factorisation stops there, that diagonal left in place. Compiled as C++17 by nvcc, so this header
// includes nothing of C++20.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace accel::solver {

// The largest n these kernels take: a row per thread.
inline constexpr std::int64_t kSmallCholeskyMaxN = 256;

// Enqueues A = L Lᵀ (upper = false) or Uᵀ U (upper = true) of `batch` n x n matrices (n <= kSmallCholeskyMaxN) in
// place: column-major, leading dimension lda, matrix b at a + b * stride, one info per matrix into infos. The
// launches' error, if any. T is float or double.
template <class T>
[[nodiscard]] cudaError_t launch_small_cholesky(T* a, std::int64_t n, std::int64_t lda, std::int64_t stride,
                                                std::int64_t batch, bool upper, std::int32_t* infos,
                                                cudaStream_t stream);

}  // namespace accel::solver

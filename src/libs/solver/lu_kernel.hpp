// LU with partial pivoting of small real matrices by kernels of the family's own, for Getrf on CUDA. cuSOLVER's getrf
// takes ~430 µs for a 256 x 256 matrix on an H100 (one long kernel, not launch overhead: replayed as a CUDA graph it
// costs the same) and has no batched form, so a batch of small matrices was a loop of such calls. Here a matrix is
// factored in panels of 32 columns: one block per matrix factors a panel, a row per thread held in registers, then
// blocks over 16-column tiles apply its row interchanges left and right of it, solve for U's block row and update
// the trailing matrix. The result is LAPACK's: L below the diagonal (unit diagonal implied), U on and above it, pivots
// 1-based and applied in order, info the first exactly zero U(i,i) (1-based) or 0, the factorisation going on past
// it. Measured in docs/PERFORMANCE.md (section 19).
// Compiled as C++17 by nvcc, so this header includes nothing of C++20.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace accel::solver {

// The largest n these kernels take: a panel of n rows must fit in one block's shared memory.
inline constexpr std::int64_t kSmallLuMaxN = 256;

// Enqueues P A = L U of `batch` n x n matrices (n <= kSmallLuMaxN) in place: column-major, leading dimension lda,
// matrix b at a + b * stride; n pivots per matrix into ipiv, one info per matrix into infos. The launches' error, if
// any. T is float or double.
template <class T>
[[nodiscard]] cudaError_t launch_small_lu(T* a, std::int64_t n, std::int64_t lda, std::int64_t stride,
                                          std::int64_t batch, std::int32_t* ipiv, std::int32_t* infos,
                                          cudaStream_t stream);

}  // namespace accel::solver

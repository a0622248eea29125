// The singular value decomposition of small square real matrices by a kernel of the family's own, for Gesvdj on CUDA:
// one-sided Jacobi (Hestenes), one block per matrix, the matrix and V in shared memory. cuSOLVER's gesvdjBatched took
// 351 µs for 64 matrices of 32 x 32 in f64 on an H100, and PyTorch 472 (docs/PERFORMANCE.md, section 20): short of
// the 1.5x asked of batched work. Each sweep takes every pair of columns once, in rounds of disjoint pairs (the
// circle method), a warp per pair, rotating the pair (and V's) to orthogonality unless it is already orthogonal to
// the tolerance: |a_pᵀ a_q| <= tolerance √n ‖a_p‖ ‖a_q‖, LAPACK's gesvj rule (√n: the rounding of a dot product of
// n terms, without which a tolerance of ε would not be reached), or one of them is negligible (jacobi_rotation.cuh:
// A is first scaled by a power of two to a largest element in [0.5, 1), so that sums of squares neither overflow nor
// lose their precision to subnormal numbers). The sweeps stop after one that rotated nothing; if max_sweeps pass
// first, the matrix's info is n + 1. The singular values are then the columns' norms, descending, U the columns over
// them, and a column that became zero or negligible takes a unit vector orthogonal to the others (the first of e_1,
// e_2, … that is not in their span), so that U stays orthogonal for a singular matrix. Measured in
// docs/PERFORMANCE.md (section 21).
// Compiled as C++17 by nvcc, so this header includes nothing of C++20.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace accel::solver {

// The largest n this kernel takes: a lane per row, a warp per pair of columns.
inline constexpr std::int64_t kSmallJacobiMaxN = 32;

// Whether an m x n Gesvdj of `batch` matrices runs here: square, 1 <= n <= kSmallJacobiMaxN, a batch of a grid's
// width. Layouts are free (any leading dimensions and strides the request's checks allowed).
[[nodiscard]] bool takes_small_jacobi_svd(std::int64_t m, std::int64_t n, std::int64_t batch);

// Enqueues the decomposition of `batch` n x n matrices (column-major, lda, matrix b at a + b * stride_a; A is only
// read): n values per matrix into s (packed), and, where u and v are not null, U and V (n x n each, leading dimensions
// ldu and ldv, strides stride_u and stride_v). One info per matrix into infos: 0, or n + 1 when max_sweeps (>= 1)
// passed before a sweep rotated nothing. `tolerance` 0 means the dtype's ε. T is float or double.
template <class T>
[[nodiscard]] cudaError_t launch_small_jacobi_svd(const T* a, std::int64_t n, std::int64_t lda, std::int64_t stride_a,
                                                  std::int64_t batch, T* s, T* u, std::int64_t ldu,
                                                  std::int64_t stride_u, T* v, std::int64_t ldv, std::int64_t stride_v,
                                                  double tolerance, int max_sweeps, std::int32_t* infos,
                                                  cudaStream_t stream);

}  // namespace accel::solver

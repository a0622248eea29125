// The singular value decomposition of square real matrices from 33 x 33 to 256 x 256 by a kernel of the family's own,
// for Gesvdj on CUDA: one-sided Jacobi (Hestenes), as jacobi_svd_kernel.hpp for smaller ones, spread over a
// thread-block cluster per matrix. cuSOLVER's gesvdj took 6.6 ms for one 256 x 256 f32 matrix on an H100 and
// PyTorch 7.1 (docs/PERFORMANCE.md, section 15): short of the 1.5x asked of work of this size.
//
// The columns are split into 16 blocks; each sweep pairs the blocks in 15 rounds (the circle method), a block of the
// cluster per pair of blocks, a cluster barrier between rounds. A block loads its two blocks of columns (of A, and of
// V) into shared memory, rotates each pair of their columns to orthogonality by the gesvj rule of jacobi_rotation.cuh
// — in a sweep's first round every pair of the 2w columns, in the others each column of one block with each of the
// other's — a warp per pair, and writes them back. So every pair of columns meets once a sweep. A is first scaled by a
// power of two, as in the smaller kernel. The sweeps stop after
// one that rotated nothing, or after max_sweeps (info n + 1). The values, U and V are then as jacobi_svd_kernel.hpp
// makes them: the columns' norms descending, zero columns of U replaced to keep it orthogonal.
// Compiled as C++17 by nvcc, so this header includes nothing of C++20.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace accel::solver {

// The largest n this kernel takes: 16 blocks of 16 columns, eight rows a lane.
inline constexpr std::int64_t kBlockJacobiMaxN = 256;

// Whether an m x n Gesvdj of `batch` matrices runs here: square, 32 < n <= kBlockJacobiMaxN, and a batch whose
// clusters fit a grid. Layouts are free.
[[nodiscard]] bool takes_block_jacobi_svd(std::int64_t m, std::int64_t n, std::int64_t batch);

// The elements of the dtype the kernel's work area takes: per matrix V as it turns (n x n) with vectors, or each
// column's scale without, then the columns' values.
[[nodiscard]] std::int64_t block_jacobi_svd_work_elements(std::int64_t n, std::int64_t batch, bool vectors);

// Enqueues the decomposition of `batch` n x n matrices (column-major, lda, matrix b at a + b * stride_a), which it
// destroys: n values per matrix into s (packed) and, where u and v are not null, U and V (n x n each, leading
// dimensions ldu and ldv, strides stride_u and stride_v). `work` holds block_jacobi_svd_work_elements. One info per
// matrix into infos: 0, or n + 1 when max_sweeps (>= 1) passed before a sweep rotated nothing. `tolerance` 0 means
// the dtype's ε. T is float or double.
template <class T>
[[nodiscard]] cudaError_t launch_block_jacobi_svd(T* a, std::int64_t n, std::int64_t lda, std::int64_t stride_a,
                                                  std::int64_t batch, T* s, T* u, std::int64_t ldu,
                                                  std::int64_t stride_u, T* v, std::int64_t ldv, std::int64_t stride_v,
                                                  double tolerance, int max_sweeps, T* work, std::int32_t* infos,
                                                  cudaStream_t stream);

}  // namespace accel::solver

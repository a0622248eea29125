// Householder QR of small real matrices by kernels of the family's own, for Geqrf, Orgqr and Ormqr (from the left) on
// CUDA. cuSOLVER's geqrf and orgqr take ~770 µs together for one 256 x 256 matrix on an H100, in their kernels (a CUDA
// graph of them costs the same), and have no batched form: a batch of small matrices was a loop of such calls. Here
// the reflectors are made 32 columns at a time, one block per matrix, a row per thread in registers (LAPACK's geqr2 on
// the panel, with every reduction a column needs in one pass), and applied to the rest as a block reflector
// I - V T Vᵀ (LAPACK's larft and larfb): blocks over 4-column tiles, each with its Vᵀ X, T's product and its update.
// Q is formed the same way from the last panel back (LAPACK's orgqr) and applied to C panel by panel (ormqr). The
// results are LAPACK's: R on and above the diagonal, the reflectors (unit first element implied) below it, tau by
// dlarfg's rule (0 where a column is already reduced), and Q. Unlike LAPACK's dnrm2, a column's sum of squares is not
// rescaled: elements beyond about 1e19 in magnitude (f32; 1e154 in f64) overflow it, and a column whose elements
// below the diagonal all lie under 1e-19 (1e-154) counts as reduced. Measured in docs/PERFORMANCE.md (sections 20
// and 21).
// Compiled as C++17 by nvcc, so this header includes nothing of C++20.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace accel::solver {

// The most rows these kernels take (a row per thread of one block) and the most columns a Geqrf may have.
inline constexpr std::int64_t kSmallQrMaxRows = 256;
inline constexpr std::int64_t kSmallQrMaxColumns = 256;
// The most workspace a request may take to run here rather than on cuSOLVER (a huge batch of tiny matrices).
inline constexpr std::int64_t kSmallQrMaxWorkspaceBytes = std::int64_t{1} << 30;

// The workspace, in elements, these kernels take for a Geqrf of `batch` m x n matrices (T of one panel per matrix,
// where a panel has columns right of it), and for an Orgqr of m-row Q from k reflectors (each panel's reflectors
// and T per matrix).
[[nodiscard]] std::int64_t small_geqrf_workspace(std::int64_t m, std::int64_t n, std::int64_t batch);
[[nodiscard]] std::int64_t small_orgqr_workspace(std::int64_t m, std::int64_t k, std::int64_t batch);

// Whether a real Geqrf, Orgqr or Ormqr (Q of m rows from the left, C m x n) of this shape runs here: m <=
// kSmallQrMaxRows, n <= kSmallQrMaxColumns for Geqrf, k >= 1 for the others, a batch of a grid's width, and the
// workspace of elements of `element_bytes` within the bound. Ormqr takes small_orgqr_workspace's. None takes an
// empty problem, which stays the plan's (nothing to launch).
[[nodiscard]] bool takes_small_geqrf(std::int64_t m, std::int64_t n, std::int64_t batch, std::int64_t element_bytes);
[[nodiscard]] bool takes_small_orgqr(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                                     std::int64_t element_bytes);
[[nodiscard]] bool takes_small_ormqr(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                                     std::int64_t element_bytes);

// Enqueues the QR of `batch` m x n matrices in place (column-major, leading dimension lda, matrix b at
// a + b * stride), min(m, n) scalars per matrix into tau; `work` holds small_geqrf_workspace elements. T is float or
// double. The launches' error, if any.
template <class T>
[[nodiscard]] cudaError_t launch_small_geqrf(T* a, std::int64_t m, std::int64_t n, std::int64_t lda,
                                             std::int64_t stride, std::int64_t batch, T* tau, T* work,
                                             cudaStream_t stream);

// Enqueues Q's first n columns (m x n, m >= n >= k >= 1) from the k reflectors below A's diagonal and their scalars
// (k per matrix), in place of A; `work` holds small_orgqr_workspace elements.
template <class T>
[[nodiscard]] cudaError_t launch_small_orgqr(T* a, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t lda,
                                             std::int64_t stride, std::int64_t batch, const T* tau, T* work,
                                             cudaStream_t stream);

// Enqueues C = op(Q) C for `batch` m x n matrices C (leading dimension ldc, matrix b at c + b * stride_c), Q of m
// rows from the k reflectors below A's diagonal (m x k, lda, stride_a) and their scalars (k per matrix); op(Q) is
// Qᵀ where `transpose`. `work` holds small_orgqr_workspace(m, k, batch) elements.
template <class T>
[[nodiscard]] cudaError_t launch_small_ormqr(const T* a, std::int64_t m, std::int64_t k, std::int64_t lda,
                                             std::int64_t stride_a, std::int64_t batch, const T* tau, bool transpose,
                                             T* c, std::int64_t n, std::int64_t ldc, std::int64_t stride_c, T* work,
                                             cudaStream_t stream);

}  // namespace accel::solver

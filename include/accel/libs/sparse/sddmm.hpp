/// @file
/// Sampled dense-dense matrix product (cusparseSDDMM on CUDA, Eigen on the CPU device):
///   SDDMM  C = alpha (op(A) op(B)) ∘ spy(C) + beta C     (A and B dense, C sparse CSR)
/// Only C's entries are computed: entry (i, j) of C becomes alpha · (row i of op(A)) · (column j of op(B)) plus beta
/// times its old value. C's structure is checked and analysed as A's is for SpMV (sparse.hpp: Matrix::structure).
///
/// @code
///   accel::sparse::SDDMM r{.a = {.rows = m, .cols = k, .data = a}, .b = {.rows = k, .cols = n, .data = b}, .c = c};
/// @endcode
#pragma once

#include "accel/libs/sparse/sparse.hpp"

namespace accel::sparse {

/// C = alpha (op(A) op(B)) ∘ spy(C) + beta C: the dense product sampled at C's entries (see the file's description).
struct SDDMM {
  static constexpr const char* kName = "sparse::SDDMM";
  using Response = Done;

  Transpose op_a = Transpose::none;  ///< op(A): A or Aᵀ
  Transpose op_b = Transpose::none;  ///< op(B): B or Bᵀ
  double alpha = 1.0;                ///< scales the sampled product
  double beta = 0.0;                 ///< scales C's values; 0: they are not read
  DenseMatrix a;                     ///< read: op(A) is m x k, in c's dtype
  DenseMatrix b;                     ///< read: op(B) is k x n, in a's order
  Matrix c;  ///< CSR m x n, f32 or f64; its values read (unless beta = 0) and written, its structure read
};

}  // namespace accel::sparse

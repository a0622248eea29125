/// @file
/// BLAS level 3 beyond GEMM, on f32 or f64 (OpenBLAS on the CPU device; on CUDA cuBLAS, with kernels of accel's own
/// where they were measured faster: a Trsm of order 256 or more with 256 right-hand sides or more runs by blocks,
/// diagonal blocks solved by a kernel of ours between GEMMs; Symm and Trmm may run as one GEMM over the whole matrix),
/// optionally strided-batched:
///   Trsm  solves op(A) X = alpha B (side left) or X op(A) = alpha B (side right) for X, with A triangular; X
///         replaces B
///   Syrk  C = alpha op(A) op(A)ᵀ + beta C, of which only the `fill` triangle of C is written
///   Symm  C = alpha A B + beta C (side left) or alpha B A + beta C (side right), A symmetric
///   Trmm  B = alpha op(A) B (side left) or alpha B op(A) (side right), A triangular; in place, as in BLAS
///   Geam  C = alpha op(A) + beta op(B) (cuBLAS's extension; a plain loop on the CPU device)
///
/// Matrices are column-major, as BLAS stores them: element (i, j) of matrix `b` of a batch is at
/// b * stride + j * ld + i. A leading dimension or stride of 0 means packed (the rows; ld * columns). Only the `fill`
/// triangle of a triangular or symmetric matrix is read (and, for Syrk's C, written); the other is not touched. A
/// batch runs its matrices one after another on CUDA, each as a single matrix would.
///
/// @code
///   accel::blas::Trsm solve{.dtype = accel::DType::f64, .side = accel::blas::Side::left,
///                           .fill = accel::blas::Fill::lower, .m = 100, .n = 8, .a = l, .b = b};  // L X = B
///   accel::Status s = device.ask(solve).wait().status();
/// @endcode
///
/// A request is checked whole before anything runs (sizes, leading dimensions, strides, enumerators, buffer sizes;
/// the written matrix may not share a buffer with A, nor the batch's written matrices overlap), naming what was
/// wrong. Sizes and leading dimensions must fit the 32-bit integers of BLAS and cuBLAS. Trsm does not check that A's
/// diagonal is free of zeros (BLAS does not either): a zero there gives infinities or NaNs.
#pragma once

#include <cstdint>
#include <string_view>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/result.hpp"
#include "accel/libs/blas/gemm.hpp"  // Transpose

namespace accel::blas {

/// Which side of X the triangular matrix multiplies: op(A) X (left) or X op(A) (right).
enum class Side : std::uint8_t { left, right };
/// Which triangle of a triangular or symmetric matrix is used: on and below the diagonal, or on and above it.
enum class Fill : std::uint8_t { lower, upper };
/// Whether a triangular matrix's diagonal is read (non_unit) or taken as ones without being read (unit).
enum class Diagonal : std::uint8_t { non_unit, unit };

/// The enumerator's name, for messages.
[[nodiscard]] std::string_view to_string(Side side) noexcept;
/// The enumerator's name, for messages.
[[nodiscard]] std::string_view to_string(Fill fill) noexcept;
/// The enumerator's name, for messages.
[[nodiscard]] std::string_view to_string(Diagonal diagonal) noexcept;

/// Solves op(A) X = alpha B (left) or X op(A) = alpha B (right) for m x n X, A being triangular (m x m on the left,
/// n x n on the right); X replaces B.
struct Trsm {
  static constexpr const char* kName = "blas::Trsm";
  using Response = Done;

  DType dtype = DType::f32;                ///< element type of A and B: f32 or f64
  Side side = Side::left;                  ///< where op(A) stands
  Fill fill = Fill::lower;                 ///< A's triangle read
  Transpose transpose = Transpose::none;   ///< op(A): A or Aᵀ
  Diagonal diagonal = Diagonal::non_unit;  ///< whether A's diagonal is read or taken as ones
  std::int64_t m = 0;                      ///< rows of B and X
  std::int64_t n = 0;                      ///< columns of B and X
  std::int64_t lda = 0;                    ///< A's leading dimension; 0: packed
  std::int64_t ldb = 0;                    ///< B's leading dimension; 0: packed (m)
  std::int64_t batch = 1;                  ///< independent problems in the same buffers
  std::int64_t stride_a = 0;               ///< elements between consecutive matrices of A; 0: packed
  std::int64_t stride_b = 0;               ///< elements between consecutive matrices of B; 0: packed
  double alpha = 1.0;                      ///< scales B
  BufferHandle a;                          ///< read: the triangle `fill` (and the diagonal unless unit)
  BufferHandle b;                          ///< read and written: B in, X out
};

/// C = alpha op(A) op(A)ᵀ + beta C for n x n symmetric C, op(A) being n x k: A (n x k, transpose none) or Aᵀ (A is
/// k x n); only C's `fill` triangle is read and written.
struct Syrk {
  static constexpr const char* kName = "blas::Syrk";
  using Response = Done;

  DType dtype = DType::f32;               ///< element type of A and C: f32 or f64
  Fill fill = Fill::lower;                ///< C's triangle read and written
  Transpose transpose = Transpose::none;  ///< op(A): A (n x k) or Aᵀ (A is k x n)
  std::int64_t n = 0;                     ///< order of C
  std::int64_t k = 0;                     ///< columns of op(A)
  std::int64_t lda = 0;                   ///< A's leading dimension; 0: packed
  std::int64_t ldc = 0;                   ///< C's leading dimension; 0: packed (n)
  std::int64_t batch = 1;                 ///< independent products in the same buffers
  std::int64_t stride_a = 0;              ///< elements between consecutive matrices of A; 0: packed
  std::int64_t stride_c = 0;              ///< elements between consecutive matrices of C; 0: packed
  double alpha = 1.0;                     ///< scales the product
  double beta = 0.0;                      ///< scales C; 0: C is not read
  BufferHandle a;                         ///< read
  BufferHandle c;                         ///< read (unless beta is 0) and written: the `fill` triangle
};

/// C = alpha A B + beta C (left: A is m x m) or alpha B A + beta C (right: A is n x n) for m x n B and C, A being
/// symmetric of which only the `fill` triangle is read.
struct Symm {
  static constexpr const char* kName = "blas::Symm";
  using Response = Done;

  DType dtype = DType::f32;   ///< element type of A, B and C: f32 or f64
  Side side = Side::left;     ///< where A stands
  Fill fill = Fill::lower;    ///< A's triangle read
  std::int64_t m = 0;         ///< rows of B and C
  std::int64_t n = 0;         ///< columns of B and C
  std::int64_t lda = 0;       ///< A's leading dimension; 0: packed
  std::int64_t ldb = 0;       ///< B's leading dimension; 0: packed (m)
  std::int64_t ldc = 0;       ///< C's leading dimension; 0: packed (m)
  std::int64_t batch = 1;     ///< independent products in the same buffers
  std::int64_t stride_a = 0;  ///< elements between consecutive matrices of A; 0: packed
  std::int64_t stride_b = 0;  ///< elements between consecutive matrices of B; 0: packed
  std::int64_t stride_c = 0;  ///< elements between consecutive matrices of C; 0: packed
  double alpha = 1.0;         ///< scales the product
  double beta = 0.0;          ///< scales C; 0: C is not read
  BufferHandle a;             ///< read: the triangle `fill`
  BufferHandle b;             ///< read
  BufferHandle c;             ///< read (unless beta is 0) and written
};

/// B = alpha op(A) B (left: A is m x m) or alpha B op(A) (right: A is n x n) for m x n B, A being triangular; in
/// place, as BLAS's trmm (cuBLAS's out-of-place form is given B as its C).
struct Trmm {
  static constexpr const char* kName = "blas::Trmm";
  using Response = Done;

  DType dtype = DType::f32;                ///< element type of A and B: f32 or f64
  Side side = Side::left;                  ///< where op(A) stands
  Fill fill = Fill::lower;                 ///< A's triangle read
  Transpose transpose = Transpose::none;   ///< op(A): A or Aᵀ
  Diagonal diagonal = Diagonal::non_unit;  ///< whether A's diagonal is read or taken as ones
  std::int64_t m = 0;                      ///< rows of B
  std::int64_t n = 0;                      ///< columns of B
  std::int64_t lda = 0;                    ///< A's leading dimension; 0: packed
  std::int64_t ldb = 0;                    ///< B's leading dimension; 0: packed (m)
  std::int64_t batch = 1;                  ///< independent products in the same buffers
  std::int64_t stride_a = 0;               ///< elements between consecutive matrices of A; 0: packed
  std::int64_t stride_b = 0;               ///< elements between consecutive matrices of B; 0: packed
  double alpha = 1.0;                      ///< scales the product
  BufferHandle a;                          ///< read: the triangle `fill` (and the diagonal unless unit)
  BufferHandle b;                          ///< read and written
};

/// C = alpha op(A) + beta op(B) for m x n C: op(A) is A (m x n) or Aᵀ (A is n x m), and so is op(B). cuBLAS's
/// extension to BLAS; C may not share a buffer with A or B.
struct Geam {
  static constexpr const char* kName = "blas::Geam";
  using Response = Done;

  DType dtype = DType::f32;                 ///< element type of A, B and C: f32 or f64
  Transpose transpose_a = Transpose::none;  ///< op(A): A or Aᵀ
  Transpose transpose_b = Transpose::none;  ///< op(B): B or Bᵀ
  std::int64_t m = 0;                       ///< rows of C
  std::int64_t n = 0;                       ///< columns of C
  std::int64_t lda = 0;                     ///< A's leading dimension; 0: packed (its rows)
  std::int64_t ldb = 0;                     ///< B's leading dimension; 0: packed (its rows)
  std::int64_t ldc = 0;                     ///< C's leading dimension; 0: packed (m)
  std::int64_t batch = 1;                   ///< independent sums in the same buffers
  std::int64_t stride_a = 0;                ///< elements between consecutive matrices of A; 0: packed
  std::int64_t stride_b = 0;                ///< elements between consecutive matrices of B; 0: packed
  std::int64_t stride_c = 0;                ///< elements between consecutive matrices of C; 0: packed
  double alpha = 1.0;                       ///< scales op(A)
  double beta = 0.0;                        ///< scales op(B)
  BufferHandle a;                           ///< read
  BufferHandle b;                           ///< read
  BufferHandle c;                           ///< written
};

}  // namespace accel::blas

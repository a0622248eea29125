/// @file
/// BLAS level 2 on f32 or f64 (OpenBLAS on the CPU device, cuBLAS on CUDA), optionally strided-batched:
///   Gemv  y = alpha op(A) x + beta y (one launch for the batch: a kernel of accel's where A has at most 2^20
///         elements and each sum at most 4,096 terms, else cuBLAS's gemvStridedBatched)
///   Ger   A = alpha x yᵀ + A (A m x n)
///   Trsv  solves op(A) x = b for x, A n x n triangular; x replaces b
///   Symv  y = alpha A x + beta y, A n x n symmetric, only its `fill` triangle read
/// Ger, Trsv and Symv run one call per member of a batch on both devices (cuBLAS has no batched form of them).
/// Gemv also takes f16 and bf16 operands: it sums in f32 (the CPU device in double) and rounds each element of y once,
/// alpha and beta taken as f32 (on CUDA accel's kernel for small matrices, as for f32 and f64, else cuBLAS's HSH and
/// TST strided-batched gemv; a loop of accel's on the CPU).
///
/// For Gemv, A is an m x n column-major matrix, as BLAS stores it: element (i, j) of matrix `b` of a batch is at
/// b * stride_a + j * lda + i. op(A) is A (x has n elements, y m) or Aᵀ (x has m, y n). Vectors step by their
/// increment, a negative one walking backwards as in BLAS (include/accel/libs/blas/level1.hpp); vector `b` of a batch
/// starts b * stride_x (or stride_y) elements into its buffer. A leading dimension or stride of 0 means packed.
/// An empty product (op(A) with no columns) leaves y scaled by beta; beta = 0 means y is not read.
///
/// @code
///   accel::blas::Gemv mv{.dtype = accel::DType::f32, .transpose = accel::Transpose::transpose, .m = 300, .n = 200,
///                        .a = a, .x = x, .y = y};  // y (200) = Aᵀ x (300)
///   accel::Status s = device.ask(mv).wait().status();
/// @endcode
///
/// A request is checked whole before anything runs (sizes, leading dimension, increments, strides, buffer sizes;
/// y may not share a buffer with A or x, nor the batch's y overlap), naming what was wrong. Sizes, leading
/// dimensions and increments must fit the 32-bit integers of BLAS and cuBLAS.
#pragma once

#include <cstdint>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/result.hpp"
#include "accel/libs/blas/gemm.hpp"    // Transpose
#include "accel/libs/blas/level3.hpp"  // Fill, Diagonal

namespace accel::blas {

/// y = alpha op(A) x + beta y (see the file's description).
struct Gemv {
  static constexpr const char* kName = "blas::Gemv";
  using Response = Done;

  DType dtype = DType::f32;               ///< element type of A, x and y: f32, f64, f16 or bf16
  Transpose transpose = Transpose::none;  ///< op(A): A or Aᵀ
  std::int64_t m = 0;                     ///< rows of A
  std::int64_t n = 0;                     ///< columns of A
  std::int64_t lda = 0;                   ///< A's leading dimension; 0: packed (m)
  std::int64_t incx = 1;                  ///< x's increment, not 0 (negative: backwards)
  std::int64_t incy = 1;                  ///< y's increment, not 0 (negative: backwards)
  std::int64_t batch = 1;                 ///< independent products in the same buffers
  std::int64_t stride_a = 0;              ///< elements between consecutive matrices of A; 0: packed (lda * n)
  std::int64_t stride_x = 0;              ///< elements between consecutive vectors x; 0: packed (x's span)
  std::int64_t stride_y = 0;              ///< elements between consecutive vectors y; 0: packed (y's span)
  double alpha = 1.0;                     ///< scales the product
  double beta = 0.0;                      ///< scales y; 0: y is not read
  BufferHandle a;                         ///< read
  BufferHandle x;                         ///< read
  BufferHandle y;                         ///< read (unless beta is 0) and written
};

/// A = alpha x yᵀ + A: the rank-1 update of an m x n matrix by x (m elements) and y (n elements).
struct Ger {
  static constexpr const char* kName = "blas::Ger";
  using Response = Done;

  DType dtype = DType::f32;   ///< element type of A, x and y: f32 or f64
  std::int64_t m = 0;         ///< rows of A, elements of x
  std::int64_t n = 0;         ///< columns of A, elements of y
  std::int64_t lda = 0;       ///< A's leading dimension; 0: packed (m)
  std::int64_t incx = 1;      ///< x's increment, not 0 (negative: backwards)
  std::int64_t incy = 1;      ///< y's increment, not 0 (negative: backwards)
  std::int64_t batch = 1;     ///< independent updates in the same buffers
  std::int64_t stride_a = 0;  ///< elements between consecutive matrices of A; 0: packed (lda * n)
  std::int64_t stride_x = 0;  ///< elements between consecutive vectors x; 0: packed (x's span)
  std::int64_t stride_y = 0;  ///< elements between consecutive vectors y; 0: packed (y's span)
  double alpha = 1.0;         ///< scales x yᵀ
  BufferHandle a;             ///< read and written
  BufferHandle x;             ///< read
  BufferHandle y;             ///< read
};

/// Solves op(A) x = b for x, A being n x n triangular (its `fill` triangle read); x replaces b. A zero on a non-unit
/// diagonal is not checked for (BLAS does not either): it gives infinities or NaNs.
struct Trsv {
  static constexpr const char* kName = "blas::Trsv";
  using Response = Done;

  DType dtype = DType::f32;                ///< element type of A and x: f32 or f64
  Fill fill = Fill::lower;                 ///< A's triangle read
  Transpose transpose = Transpose::none;   ///< op(A): A or Aᵀ
  Diagonal diagonal = Diagonal::non_unit;  ///< whether A's diagonal is read or taken as ones
  std::int64_t n = 0;                      ///< order of A, elements of x
  std::int64_t lda = 0;                    ///< A's leading dimension; 0: packed (n)
  std::int64_t incx = 1;                   ///< x's increment, not 0 (negative: backwards)
  std::int64_t batch = 1;                  ///< independent solves in the same buffers
  std::int64_t stride_a = 0;               ///< elements between consecutive matrices of A; 0: packed (lda * n)
  std::int64_t stride_x = 0;               ///< elements between consecutive vectors x; 0: packed (x's span)
  BufferHandle a;                          ///< read
  BufferHandle x;                          ///< read (b) and written (x)
};

/// y = alpha A x + beta y, A being n x n symmetric of which only the `fill` triangle is read.
struct Symv {
  static constexpr const char* kName = "blas::Symv";
  using Response = Done;

  DType dtype = DType::f32;   ///< element type of A, x and y: f32 or f64
  Fill fill = Fill::lower;    ///< A's triangle read
  std::int64_t n = 0;         ///< order of A, elements of x and y
  std::int64_t lda = 0;       ///< A's leading dimension; 0: packed (n)
  std::int64_t incx = 1;      ///< x's increment, not 0 (negative: backwards)
  std::int64_t incy = 1;      ///< y's increment, not 0 (negative: backwards)
  std::int64_t batch = 1;     ///< independent products in the same buffers
  std::int64_t stride_a = 0;  ///< elements between consecutive matrices of A; 0: packed (lda * n)
  std::int64_t stride_x = 0;  ///< elements between consecutive vectors x; 0: packed (x's span)
  std::int64_t stride_y = 0;  ///< elements between consecutive vectors y; 0: packed (y's span)
  double alpha = 1.0;         ///< scales the product
  double beta = 0.0;          ///< scales y; 0: y is not read
  BufferHandle a;             ///< read
  BufferHandle x;             ///< read
  BufferHandle y;             ///< read (unless beta is 0) and written
};

}  // namespace accel::blas

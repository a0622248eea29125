/// @file
/// GEMM requests: C = activation(alpha * op(A) * op(B) + beta * C + bias), optionally strided-batched.
///
/// The same request runs on every device (OpenBLAS on the CPU; cuBLASLt on CUDA, small f32 products on a kernel of
/// accel's). As in CUTLASS, what keys a plan (GemmShape: sizes, layouts, dtypes, epilogue) is kept apart from what
/// changes every call (buffers and scalars):
///
/// @code
///   accel::Gemm gemm{
///       .shape = {.m = 128, .n = 64, .k = 256},          // row-major, no transposes, packed, f32
///       .a = a, .b = b, .c = c,                          // Buffer<float> converts to BufferHandle
///       .alpha = 1.0, .beta = 0.0};
///   accel::Status s = device.gemm(gemm).wait().status();
/// @endcode
///
/// The epilogue (include/accel/core/epilogue.hpp) is what cuBLASLt fuses: identity, relu or gelu_tanh, with or
/// without a bias along C's contiguous dimension (per_column: n elements, for row-major C; per_row: m elements,
/// for column-major C). Any other activation or bias is refused with not_supported on every device:
///
/// @code
///   .shape = {.m = 128, .n = 64, .k = 256,
///             .epilogue = {.activation = accel::Activation::relu, .bias = accel::BiasVector::per_column}},
/// @endcode
///
/// Leading dimensions and batch strides of 0 mean "packed": the smallest valid value is taken.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/epilogue.hpp"
#include "accel/core/result.hpp"

namespace accel {

/// How a matrix is stored: rows contiguous (row-major) or columns contiguous (column-major).
enum class MatrixOrder : std::uint8_t { row_major, column_major };
/// Whether an operand is used as stored (none) or transposed.
enum class Transpose : std::uint8_t { none, transpose };

/// How the product is accumulated. `standard` is the dtype's own precision (f32 accumulate for 16-bit inputs);
/// `tf32` lets f32 GEMMs use TF32 tensor cores where the device has them.
enum class GemmCompute : std::uint8_t { standard, tf32 };

/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(MatrixOrder order) noexcept;
/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(Transpose transpose) noexcept;

/// What keys a GEMM's plan: sizes, layouts, dtypes, epilogue (the buffers and scalars are in Gemm).
struct GemmShape {
  MatrixOrder order = MatrixOrder::row_major;   ///< storage order of A, B and C
  Transpose transpose_a = Transpose::none;      ///< op(A): A or Aᵀ
  Transpose transpose_b = Transpose::none;      ///< op(B): B or Bᵀ
  std::int64_t m = 0;                           ///< rows of op(A) and C
  std::int64_t n = 0;                           ///< columns of op(B) and C
  std::int64_t k = 0;                           ///< columns of op(A), rows of op(B)
  std::int64_t lda = 0;                         ///< A's leading dimension; 0: packed
  std::int64_t ldb = 0;                         ///< B's leading dimension; 0: packed
  std::int64_t ldc = 0;                         ///< C's leading dimension; 0: packed
  std::int64_t batch = 1;                       ///< matrices in the strided batch
  std::int64_t stride_a = 0;                    ///< elements between consecutive batch matrices
  std::int64_t stride_b = 0;                    ///< elements between consecutive batch matrices of B
  std::int64_t stride_c = 0;                    ///< elements between consecutive batch matrices of C
  DType input_type = DType::f32;                ///< A and B
  DType output_type = DType::f32;               ///< C (and bias)
  GemmCompute compute = GemmCompute::standard;  ///< how the product is accumulated
  Epilogue epilogue;                            ///< the activation and bias fused after the product

  /// Equal when every field is.
  friend bool operator==(const GemmShape&, const GemmShape&) noexcept = default;
};

/// C = activation(alpha * op(A) * op(B) + beta * C + bias) on buffers a, b, c (see the file's description).
struct Gemm {
  static constexpr const char* kName = "Gemm";
  using Response = Done;

  GemmShape shape;     ///< sizes, layouts, dtypes and epilogue
  BufferHandle a;      ///< A, read
  BufferHandle b;      ///< B, read
  BufferHandle c;      ///< C, read (unless beta is 0) and written
  BufferHandle bias;   ///< only for an epilogue with a bias
  double alpha = 1.0;  ///< scales the product
  double beta = 0.0;   ///< scales C; 0: C is not read
};

/// A GemmShape with every default resolved and every extent checked. Stored extents are in elements.
struct GemmGeometry {
  GemmShape shape;                ///< lda/ldb/ldc and strides filled in
  std::int64_t a_rows = 0;        ///< stored A is a_rows x a_cols in shape.order
  std::int64_t a_cols = 0;        ///< columns of stored A
  std::int64_t b_rows = 0;        ///< rows of stored B
  std::int64_t b_cols = 0;        ///< columns of stored B
  std::uint64_t a_extent = 0;     ///< elements of A the request touches, all batches
  std::uint64_t b_extent = 0;     ///< elements of B the request touches, all batches
  std::uint64_t c_extent = 0;     ///< elements of C the request touches, all batches
  std::uint64_t bias_extent = 0;  ///< 0 when the epilogue has no bias
};

/// Checks a shape without any buffers: sizes, leading dimensions, strides, overflow of the extents, the epilogue.
[[nodiscard]] Result<GemmGeometry> plan_gemm_geometry(const GemmShape& shape);

/// The shape as text, for messages and plan descriptions.
[[nodiscard]] std::string to_string(const GemmShape& shape);

}  // namespace accel

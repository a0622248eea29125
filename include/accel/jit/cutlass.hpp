/// @file
/// Requests served by CUTLASS kernels that accel instantiates, compiles and caches at run time (see
/// docs/ARCHITECTURE.md, "JIT"): GEMM with an epilogue visitor tree, grouped GEMM, and implicit-GEMM convolution.
///
/// The first request of a new instantiation compiles it (tens of seconds). `when_compiling` says what the request
/// does meanwhile: `wait` for the kernel; `library_fallback`: answered now by cuBLASLt / cuDNN where they can
/// compute the same thing (the compile goes on in the background and later requests use the kernel; where no
/// library computes it, the request waits); `unavailable`: answered at once with Code::unavailable while the
/// compile goes on (a caller with its own fallback, or one warming kernels up ahead of time). Compiled kernels are
/// cached in memory and on disk; a later process loads them in milliseconds.
///
/// The CPU device runs these requests too (a double-precision reference), so the same code runs anywhere.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/epilogue.hpp"
#include "accel/dnn/convolution.hpp"
#include "accel/libs/blas/gemm.hpp"

namespace accel {

/// What a request whose kernel is not compiled yet does meanwhile (see the file's description).
enum class WhenCompiling : std::uint8_t { wait, library_fallback, unavailable };
/// The CUTLASS 3 kernel schedule of a GEMM; `automatic` lets accel choose.
enum class KernelSchedule : std::uint8_t { automatic, tma_cooperative, tma_pingpong };

/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(WhenCompiling when) noexcept;

/// The CTA tile, cluster and schedule of a CUTLASS kernel; all zero / automatic lets accel choose.
struct KernelTile {
  std::int32_t m = 0;          ///< CTA tile rows; 0: accel's choice
  std::int32_t n = 0;          ///< CTA tile columns; 0: accel's choice
  std::int32_t k = 0;          ///< CTA tile depth along k; 0: accel's choice
  std::int32_t cluster_m = 0;  ///< CTAs per cluster along m; 0: accel's choice
  std::int32_t cluster_n = 0;  ///< CTAs per cluster along n; 0: accel's choice
  /// TMA cooperative or ping-pong warp specialisation, or accel's choice
  KernelSchedule schedule = KernelSchedule::automatic;
  /// Equal when every field is.
  friend bool operator==(const KernelTile&, const KernelTile&) noexcept = default;
};

/// D = activation(alpha * A B * row_scale[i] * col_scale[j] + beta * C + bias) + residual, one kernel.
/// A is m x k (layout_a), B k x n (layout_b), C, D and residual m x n (layout_c). Inputs f16, bf16 or fp8_e4m3
/// (fp8: A row-major, B column-major); outputs f16, bf16 or f32; C, bias and residual have the output type,
/// row_scale (m) and col_scale (n) are f32. Null operands are absent: C (then beta is not used), bias, the scales,
/// the residual. C and D may be the same buffer. Leading dimensions of 0 mean packed. The epilogue
/// (include/accel/core/epilogue.hpp) takes identity, relu, gelu_tanh (CUTLASS's GELU_taylor) or silu, and a
/// per_row or per_column bias; gelu_erf, sigmoid, tanh and a per_channel bias are refused with not_supported:
///   .epilogue = {.activation = accel::Activation::silu, .bias = accel::BiasVector::per_row}
struct CutlassGemm {
  static constexpr const char* kName = "CutlassGemm";
  using Response = Done;

  std::int64_t m = 0;                                ///< rows of A, C and D
  std::int64_t n = 0;                                ///< columns of B, C and D
  std::int64_t k = 0;                                ///< columns of A, rows of B
  DType input = DType::f16;                          ///< element type of A and B: f16, bf16 or fp8_e4m3
  DType output = DType::f16;                         ///< element type of D (and C, bias, residual): f16, bf16 or f32
  MatrixOrder layout_a = MatrixOrder::row_major;     ///< A's storage order
  MatrixOrder layout_b = MatrixOrder::column_major;  ///< B's storage order
  MatrixOrder layout_c = MatrixOrder::row_major;     ///< storage order of C, D and the residual
  BufferHandle a;                                    ///< A, m x k
  BufferHandle b;                                    ///< B, k x n
  BufferHandle c;                                    ///< C, m x n (null: absent, beta not used)
  BufferHandle d;                                    ///< D, m x n, written (may be C's buffer)
  std::int64_t lda = 0;                              ///< A's leading dimension; 0: packed
  std::int64_t ldb = 0;                              ///< B's leading dimension; 0: packed
  std::int64_t ldc = 0;                              ///< C's leading dimension; 0: packed
  std::int64_t ldd = 0;                              ///< of D and the residual
  float alpha = 1.0f;                                ///< scales the product
  float beta = 0.0f;                                 ///< scales C
  Epilogue epilogue;       ///< activation and bias fused into the kernel (see the description for what is supported)
  BufferHandle bias;       ///< the epilogue's bias vector, of the output type (null: none)
  BufferHandle row_scale;  ///< f32, m values multiplying row i of the product (null: none)
  BufferHandle col_scale;  ///< f32, n values multiplying column j of the product (null: none)
  BufferHandle residual;   ///< m x n, added after the activation (null: none)
  KernelTile tile;         ///< the kernel's tile, cluster and schedule; zeros let accel choose
  WhenCompiling when_compiling = WhenCompiling::wait;  ///< what the request does while its kernel compiles
};

/// A matrix inside a buffer: `offset` elements from its start.
struct MatrixRef {
  BufferHandle buffer;       ///< the buffer holding the matrix
  std::uint64_t offset = 0;  ///< elements from the buffer's start to the matrix
};

/// One GEMM of a CutlassGroupedGemm, with its own sizes and matrices.
struct GemmGroup {
  std::int64_t m = 0;    ///< rows of A, C and D
  std::int64_t n = 0;    ///< columns of B, C and D
  std::int64_t k = 0;    ///< columns of A, rows of B
  MatrixRef a;           ///< A, m x k
  MatrixRef b;           ///< B, k x n
  MatrixRef c;           ///< null buffer: no C (beta is not used for this group)
  MatrixRef d;           ///< D, m x n, written
  std::int64_t lda = 0;  ///< A's leading dimension; 0: packed
  std::int64_t ldb = 0;  ///< B's leading dimension; 0: packed
  std::int64_t ldc = 0;  ///< C's leading dimension; 0: packed
  std::int64_t ldd = 0;  ///< D's leading dimension; 0: packed
};

/// One launch for many GEMMs of different shapes (e.g. a mixture of experts): D_g = alpha * A_g B_g + beta * C_g.
/// Every group has the request's types and layouts; the sizes are the groups' own.
struct CutlassGroupedGemm {
  static constexpr const char* kName = "CutlassGroupedGemm";
  using Response = Done;

  DType input = DType::f16;                          ///< element type of A and B: f16, bf16 or fp8_e4m3
  DType output = DType::f16;                         ///< element type of D (and C, bias, residual): f16, bf16 or f32
  MatrixOrder layout_a = MatrixOrder::row_major;     ///< A's storage order
  MatrixOrder layout_b = MatrixOrder::column_major;  ///< B's storage order
  MatrixOrder layout_c = MatrixOrder::row_major;     ///< storage order of C, D and the residual
  std::vector<GemmGroup> groups;                     ///< the GEMMs, each with its own sizes and matrices
  float alpha = 1.0f;                                ///< scales the product
  float beta = 0.0f;                                 ///< scales C
  KernelTile tile;  ///< the kernel's tile, cluster and schedule; zeros let accel choose
  WhenCompiling when_compiling = WhenCompiling::wait;  ///< what the request does while its kernel compiles
};

/// Which pass of the convolution a CutlassConv computes: forward (y), data gradient (x) or filter gradient (w).
enum class ConvPass : std::uint8_t { fprop, dgrad, wgrad };
/// The enumerator's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(ConvPass pass) noexcept;

/// An implicit-GEMM 2-D convolution: x (N,H,W,C), w (K,R,S,C) and y (N,P,Q,K), channels-last and packed, f16 or
/// bf16, groups 1, symmetric padding. fprop writes y, dgrad writes x (from y = dy and w), wgrad writes w (from
/// x and y = dy): out = alpha * result + beta * out. `shape` is the forward convolution's, as for ConvFwd.
struct CutlassConv {
  static constexpr const char* kName = "CutlassConv";
  using Response = Done;

  ConvPass pass = ConvPass::fprop;  ///< which of x, y and w is written
  ConvShape shape;                  ///< the forward convolution's sizes, as for ConvFwd
  BufferHandle x;                   ///< x (N, H, W, C): read, or written by dgrad
  BufferHandle w;                   ///< w (K, R, S, C): read, or written by wgrad
  BufferHandle y;                   ///< y (N, P, Q, K): written by fprop, else read as dy
  float alpha = 1.0f;               ///< scales the result
  float beta = 0.0f;                ///< scales what the written tensor held: out = alpha * result + beta * out
  KernelTile tile;                  ///< the kernel's tile, cluster and schedule; zeros let accel choose
  WhenCompiling when_compiling = WhenCompiling::wait;  ///< what the request does while its kernel compiles
};

}  // namespace accel

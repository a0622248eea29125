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

enum class WhenCompiling : std::uint8_t { wait, library_fallback, unavailable };
enum class KernelSchedule : std::uint8_t { automatic, tma_cooperative, tma_pingpong };

[[nodiscard]] std::string_view to_string(WhenCompiling when) noexcept;

/// The CTA tile, cluster and schedule of a CUTLASS kernel; all zero / automatic lets accel choose.
struct KernelTile {
  std::int32_t m = 0;
  std::int32_t n = 0;
  std::int32_t k = 0;
  std::int32_t cluster_m = 0;
  std::int32_t cluster_n = 0;
  KernelSchedule schedule = KernelSchedule::automatic;
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

  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  DType input = DType::f16;
  DType output = DType::f16;
  MatrixOrder layout_a = MatrixOrder::row_major;
  MatrixOrder layout_b = MatrixOrder::column_major;
  MatrixOrder layout_c = MatrixOrder::row_major;
  BufferHandle a;
  BufferHandle b;
  BufferHandle c;
  BufferHandle d;
  std::int64_t lda = 0;
  std::int64_t ldb = 0;
  std::int64_t ldc = 0;
  std::int64_t ldd = 0;  ///< of D and the residual
  float alpha = 1.0f;
  float beta = 0.0f;
  Epilogue epilogue;
  BufferHandle bias;
  BufferHandle row_scale;
  BufferHandle col_scale;
  BufferHandle residual;
  KernelTile tile;
  WhenCompiling when_compiling = WhenCompiling::wait;
};

/// A matrix inside a buffer: `offset` elements from its start.
struct MatrixRef {
  BufferHandle buffer;
  std::uint64_t offset = 0;
};

struct GemmGroup {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  MatrixRef a;
  MatrixRef b;
  MatrixRef c;  ///< null buffer: no C (beta is not used for this group)
  MatrixRef d;
  std::int64_t lda = 0;
  std::int64_t ldb = 0;
  std::int64_t ldc = 0;
  std::int64_t ldd = 0;
};

/// One launch for many GEMMs of different shapes (e.g. a mixture of experts): D_g = alpha * A_g B_g + beta * C_g.
/// Every group has the request's types and layouts; the sizes are the groups' own.
struct CutlassGroupedGemm {
  static constexpr const char* kName = "CutlassGroupedGemm";
  using Response = Done;

  DType input = DType::f16;
  DType output = DType::f16;
  MatrixOrder layout_a = MatrixOrder::row_major;
  MatrixOrder layout_b = MatrixOrder::column_major;
  MatrixOrder layout_c = MatrixOrder::row_major;
  std::vector<GemmGroup> groups;
  float alpha = 1.0f;
  float beta = 0.0f;
  KernelTile tile;
  WhenCompiling when_compiling = WhenCompiling::wait;
};

enum class ConvPass : std::uint8_t { fprop, dgrad, wgrad };
[[nodiscard]] std::string_view to_string(ConvPass pass) noexcept;

/// An implicit-GEMM 2-D convolution: x (N,H,W,C), w (K,R,S,C) and y (N,P,Q,K), channels-last and packed, f16 or
/// bf16, groups 1, symmetric padding. fprop writes y, dgrad writes x (from y = dy and w), wgrad writes w (from
/// x and y = dy): out = alpha * result + beta * out. `shape` is the forward convolution's, as for ConvFwd.
struct CutlassConv {
  static constexpr const char* kName = "CutlassConv";
  using Response = Done;

  ConvPass pass = ConvPass::fprop;
  ConvShape shape;
  BufferHandle x;
  BufferHandle w;
  BufferHandle y;
  float alpha = 1.0f;
  float beta = 0.0f;
  KernelTile tile;
  WhenCompiling when_compiling = WhenCompiling::wait;
};

}  // namespace accel

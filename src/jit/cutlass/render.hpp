// CUTLASS instantiations: what one compiled module is (an Instance), its identity (the bytes that key its
// cache entry and that the module reports back), and its rendered CUDA C++ source, built by nvcc into a
// loadable module with the module_abi.hpp interface.
//
// An instance holds only what changes the binary. Problem sizes, pointers, leading dimensions and scalars are
// run-time arguments (module_abi.hpp), so one module serves every problem of its instance.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "accel/core/dtype.hpp"
#include "accel/core/epilogue.hpp"
#include "accel/core/result.hpp"
#include "accel/jit/cutlass.hpp"

namespace accel::jit::cutlass {

enum class Layout : std::uint8_t { row_major, column_major };

// Hopper kernel schedules (sm_90, TMA, warp-specialised): GEMMs are persistent, cooperative (two consumer warp
// groups on one tile) or ping-pong (each on its own tile); CUTLASS's convolution has only the non-persistent
// kernel with one consumer warp group.
enum class Schedule : std::uint8_t { tma_cooperative, tma_pingpong, tma_warp_specialized };

struct TileConfig {
  std::int32_t tile_m = 128;
  std::int32_t tile_n = 256;
  std::int32_t tile_k = 64;
  std::int32_t cluster_m = 2;
  std::int32_t cluster_n = 1;
  Schedule schedule = Schedule::tma_cooperative;
  friend bool operator==(const TileConfig&, const TileConfig&) noexcept = default;
};

// The epilogue's vocabulary is every family's (include/accel/core/epilogue.hpp); check_cutlass_gemm admits the
// activations and biases rendered here.
using Activation = accel::Activation;
using BiasKind = accel::BiasVector;

// The epilogue visitor tree, as the formula of module_abi.hpp:
//   D = activation(alpha * acc * row_scale[m] * col_scale[n] + beta * C + bias) + residual
// `source` says whether C is read (beta may still be 0 at run time).
struct EpilogueSpec {
  Activation activation = Activation::identity;
  BiasKind bias = BiasKind::none;
  bool row_scale = false;
  bool col_scale = false;
  bool residual = false;
  bool source = true;
  friend bool operator==(const EpilogueSpec&, const EpilogueSpec&) noexcept = default;
};

struct GemmInstance {
  int arch = 90;              // compute capability, major * 10 + minor
  DType input = DType::f16;   // A and B: f16, bf16, fp8_e4m3
  DType output = DType::f16;  // C, D, bias, residual: f16, bf16, f32
  Layout layout_a = Layout::row_major;
  Layout layout_b = Layout::column_major;
  Layout layout_c = Layout::row_major;  // C, D and residual
  TileConfig tile;
  EpilogueSpec epilogue;
  friend bool operator==(const GemmInstance&, const GemmInstance&) noexcept = default;
};

// Grouped GEMM (CUTLASS's pointer-array grouped kernel): linear combination epilogue.
struct GroupedGemmInstance {
  int arch = 90;
  DType input = DType::f16;
  DType output = DType::f16;
  Layout layout_a = Layout::row_major;
  Layout layout_b = Layout::column_major;
  Layout layout_c = Layout::row_major;
  TileConfig tile;
  friend bool operator==(const GroupedGemmInstance&, const GroupedGemmInstance&) noexcept = default;
};

enum class ConvDirection : std::uint8_t { fprop, dgrad, wgrad };

struct ConvInstance {
  int arch = 90;
  ConvDirection direction = ConvDirection::fprop;
  DType element = DType::f16;  // x, w, y: f16 or bf16 (f32 accumulate)
  TileConfig tile{.tile_m = 128,
                  .tile_n = 128,
                  .tile_k = 64,
                  .cluster_m = 1,
                  .cluster_n = 1,
                  .schedule = Schedule::tma_warp_specialized};
  friend bool operator==(const ConvInstance&, const ConvInstance&) noexcept = default;
};

using Instance = std::variant<GemmInstance, GroupedGemmInstance, ConvInstance>;

// Checks what CUTLASS can instantiate (e.g. fp8 needs row-major A and column-major B, sm_90 schedules need
// arch 90) and returns not_supported / invalid_argument naming the field, before anything is rendered.
[[nodiscard]] Status validate(const Instance& instance);

// A canonical, human-readable text naming every field, e.g.
// "gemm sm90 a=f16:row b=f16:col c=f16:row tile=128x256x64 cluster=2x1 tma_cooperative epi=gelu_tanh,bias_col,source".
// Equal instances give equal text and different ones different text.
[[nodiscard]] std::string identity(const Instance& instance);

// The complete .cu source of the module: the ABI text, CUTLASS includes, the instantiation, the entry points.
// The instance must have passed validate().
[[nodiscard]] std::string render(const Instance& instance);

}  // namespace accel::jit::cutlass

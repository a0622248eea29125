// Implicit-GEMM 2-D convolution modules: CUTLASS 3.x sm_90 conv (CollectiveBuilder for the TMA warp-specialised
// implicit GEMM, ConvUniversal, ConvUniversalAdapter), one direction per module, and the module_abi.hpp entry
// points over AccelConvArgs.
//
// What CUTLASS 4.2 offers for sm_90 convolution, and so what validate_conv accepts:
//   - one kernel schedule, the non-persistent KernelImplicitTmaWarpSpecializedSm90 (a producer and one
//     consumer warp group); its dispatch policy refuses the persistent cooperative and ping-pong schedules
//     ("Persistent schedules not support for conv yet"): Schedule::tma_warp_specialized, the default.
//   - tile_m a multiple of 64 up to 256 (64-row GMMA atoms), tile_n and tile_k multiples of 16 up to 256,
//     tile_m * tile_n at most 128 * 128 (the single consumer warp group holds every accumulator), at least two
//     pipeline stages in shared memory, clusters of 1 or 2 along each of m and n.
// At run time the module refuses (kAccelNotSupported) what the kernel cannot do: channels c and k not multiples
// of 8 (16-byte TMA rows), device pointers not 16-byte aligned, strided dgrad (the sm_90 dgrad kernel is unit
// stride only), traversal strides above 8 (im2col TMA), and whatever CUTLASS's can_implement refuses
// (padding, filter extent and corner limits of im2col TMA, more than 2^31 - 1 output pixels).
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "jit/cutlass/render_parts.hpp"

namespace accel::jit::cutlass {
namespace {

// A bound on what the epilogue and the kernel's barriers take of a block's shared memory (kSm90SmemBytes).
constexpr std::int64_t kEpilogueReserveBytes = 32768;

std::string replace_all(std::string text, std::string_view key, std::string_view value) {
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) {
    text.replace(at, key.size(), value);
  }
  return text;
}

struct DirectionText {
  std::string_view op;                        // cutlass::conv::Operator enumerator
  std::string_view layout_c;                  // the output's layout tag for the epilogue builder
  std::string_view epilogue;                  // epilogue schedule
  std::string_view tile_n;                    // the N mode of the tile shape (wgrad's is hierarchical: (C,S,R))
  std::string_view a, b, out;                 // AccelConvArgs fields feeding GEMM A and B, and the output (C and D)
  std::string_view a_name, b_name, out_name;  // their names in messages
  std::string_view set_strides;               // statements that fill stride_c / stride_d from `problem`
};

// fprop: A = x (im2col), B = w, C/D = y.  dgrad: A = dy (im2col), B = w, C/D = dx.  wgrad: A = dy, B = x
// (im2col), C/D = dw. Output layouts follow ConvProblemShape: NPQK / NHWC outputs have the (Q,P,N) or (W,H,N)
// M mode, wgrad's KRSC output has the (C,S,R) N mode.
constexpr std::string_view kPixelOutputStrides =
    R"(  cute::for_each(cute::make_seq<cute::rank<0>(StrideC{})>{}, [&](auto i) {
    cute::get<0, i>(stride_c) = problem.stride_C[ProblemShape::RankT - 2 - i];
  });
  cute::for_each(cute::make_seq<cute::rank<0>(StrideD{})>{}, [&](auto i) {
    cute::get<0, i>(stride_d) = problem.stride_C[ProblemShape::RankT - 2 - i];
  });
)";

constexpr std::string_view kFilterOutputStrides = R"(  // (K, (C,S,R), L) strides of the packed KRSC output.
  cute::get<0>(stride_c) = problem.stride_C[0];
  cute::get<1, 1>(stride_c) = problem.stride_C[2];
  cute::get<1, 2>(stride_c) = problem.stride_C[1];
  cute::get<0>(stride_d) = problem.stride_C[0];
  cute::get<1, 1>(stride_d) = problem.stride_C[2];
  cute::get<1, 2>(stride_d) = problem.stride_C[1];
)";

DirectionText direction_text(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::fprop:
      return {.op = "kFprop",
              .layout_c = "cutlass::layout::TensorNHWC",
              .epilogue = "cutlass::epilogue::TmaWarpSpecialized",
              .tile_n = "@N@",
              .a = "x_in",
              .b = "w_in",
              .out = "y_out",
              .a_name = "x",
              .b_name = "w",
              .out_name = "y",
              .set_strides = kPixelOutputStrides};
    case ConvDirection::dgrad:
      return {.op = "kDgrad",
              .layout_c = "cutlass::layout::TensorNHWC",
              .epilogue = "cutlass::epilogue::TmaWarpSpecialized",
              .tile_n = "@N@",
              .a = "y_in",
              .b = "w_in",
              .out = "x_out",
              .a_name = "dy",
              .b_name = "w",
              .out_name = "dx",
              .set_strides = kPixelOutputStrides};
    case ConvDirection::wgrad:
      // The no-smem epilogue stores from registers with per-element predicates over the (C,S,R) mode (as
      // CUTLASS's sm_90 wgrad tests do); wgrad's output is small next to its reduction, so the TMA store buys
      // little.
      return {.op = "kWgrad",
              .layout_c = "cutlass::layout::TensorKCSR",
              .epilogue = "cutlass::epilogue::NoSmemWarpSpecialized",
              .tile_n = "cute::Shape<@N@>",
              .a = "y_in",
              .b = "x_in",
              .out = "w_out",
              .a_name = "dy",
              .b_name = "x",
              .out_name = "dw",
              .set_strides = kFilterOutputStrides};
  }
  return {};
}

}  // namespace

Status validate_conv(const ConvInstance& instance) {
  if (instance.arch != 90) {
    return not_supported(fmt::format(
        "conv: arch {} (CUTLASS's implicit-GEMM convolution modules are rendered for sm_90 only)", instance.arch));
  }
  if (instance.element != DType::f16 && instance.element != DType::bf16) {
    return not_supported(fmt::format("conv: element type {} (f16 or bf16 only)", to_string(instance.element)));
  }
  if (instance.direction != ConvDirection::fprop && instance.direction != ConvDirection::dgrad &&
      instance.direction != ConvDirection::wgrad) {
    return invalid_argument(
        fmt::format("conv: direction {} is not fprop, dgrad or wgrad", static_cast<int>(instance.direction)));
  }
  const TileConfig& t = instance.tile;
  if (t.schedule != Schedule::tma_warp_specialized) {
    return not_supported(fmt::format(
        "conv: schedule {}; CUTLASS's sm_90 convolution has only the non-persistent TMA warp-specialized kernel "
        "(KernelImplicitTmaWarpSpecializedSm90): tma_warp_specialized",
        to_string(t.schedule)));
  }
  if (t.tile_m <= 0 || t.tile_n <= 0 || t.tile_k <= 0 || t.cluster_m <= 0 || t.cluster_n <= 0) {
    return invalid_argument(fmt::format("conv: tile {}x{}x{} and cluster {}x{} must be positive", t.tile_m, t.tile_n,
                                        t.tile_k, t.cluster_m, t.cluster_n));
  }
  if (t.tile_m % 64 != 0 || t.tile_m > 256) {
    return invalid_argument(
        fmt::format("conv: tile_m {} must be 64, 128, 192 or 256 (64-row warpgroup MMAs)", t.tile_m));
  }
  if (t.tile_n % 16 != 0 || t.tile_n > 256) {
    return invalid_argument(fmt::format("conv: tile_n {} must be a multiple of 16 up to 256", t.tile_n));
  }
  if (t.tile_k % 16 != 0 || t.tile_k > 256) {
    return invalid_argument(fmt::format("conv: tile_k {} must be a multiple of 16 up to 256", t.tile_k));
  }
  if (t.tile_m * t.tile_n > 128 * 128) {
    return invalid_argument(fmt::format(
        "conv: tile {}x{} gives the one consumer warp group {} f32 accumulators per thread; at most 128 "
        "(tile_m * tile_n <= 16384), since larger tiles spill registers (256x128 ran at a tenth of 128x128's speed "
        "on an H100)",
        t.tile_m, t.tile_n, t.tile_m * t.tile_n / 128));
  }
  const std::int64_t stage_bytes =
      static_cast<std::int64_t>(t.tile_m + t.tile_n) * t.tile_k * static_cast<std::int64_t>(size_of(instance.element));
  if (2 * stage_bytes + kEpilogueReserveBytes > kSm90SmemBytes) {
    return invalid_argument(fmt::format(
        "conv: tile {}x{}x{} needs {} bytes per pipeline stage; two stages and the epilogue exceed sm_90's {} bytes "
        "of shared memory",
        t.tile_m, t.tile_n, t.tile_k, stage_bytes, kSm90SmemBytes));
  }
  if (t.cluster_m > 2 || t.cluster_n > 2) {
    return not_supported(fmt::format("conv: cluster {}x{} (1 or 2 along each of m and n for sm_90 convolution)",
                                     t.cluster_m, t.cluster_n));
  }
  return Status();
}

std::string render_conv(const ConvInstance& instance, std::string_view identity) {
  const TileConfig& t = instance.tile;
  const DirectionText d = direction_text(instance.direction);
  const std::string tile_n = fmt::format("cute::Int<{}>", t.tile_n);

  std::string body(conv_module_text());
  // Direction text first: it holds placeholders of its own (@N@) and names the pointer fields.
  body = replace_all(std::move(body), "@SET_STRIDES@", d.set_strides);
  body = replace_all(std::move(body), "@TILE_N@", replace_all(std::string(d.tile_n), "@N@", tile_n));
  body = replace_all(std::move(body), "@OP@", d.op);
  body = replace_all(std::move(body), "@LAYOUT_C@", d.layout_c);
  body = replace_all(std::move(body), "@EPILOGUE@", d.epilogue);
  body = replace_all(std::move(body), "@A_NAME@", d.a_name);
  body = replace_all(std::move(body), "@B_NAME@", d.b_name);
  body = replace_all(std::move(body), "@OUT_NAME@", d.out_name);
  body = replace_all(std::move(body), "@A@", d.a);
  body = replace_all(std::move(body), "@B@", d.b);
  body = replace_all(std::move(body), "@OUT@", d.out);
  body = replace_all(std::move(body), "@DIRECTION@", to_string(instance.direction));
  body = replace_all(std::move(body), "@ELEMENT@", cutlass_element(instance.element));
  body = replace_all(std::move(body), "@TILE_M@", std::to_string(t.tile_m));
  body = replace_all(std::move(body), "@TILE_K@", std::to_string(t.tile_k));
  body = replace_all(std::move(body), "@CLUSTER_M@", std::to_string(t.cluster_m));
  body = replace_all(std::move(body), "@CLUSTER_N@", std::to_string(t.cluster_n));

  std::string text = module_prologue(identity);
  text += body;
  return text;
}

}  // namespace accel::jit::cutlass

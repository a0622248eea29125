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

// The module text after the prologue. Placeholders: @...@.
constexpr std::string_view kConvModule = R"cu(
// ---- CUTLASS sm_90 implicit-GEMM convolution: @DIRECTION@, @ELEMENT@ ----
#include <cstdarg>
#include <cstdio>

#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/numeric_types.h"
#include "cutlass/kernel_hardware_info.hpp"
#include "cutlass/conv/convolution.h"
#include "cutlass/conv/convnd_problem_shape.hpp"
#include "cutlass/conv/dispatch_policy.hpp"
#include "cutlass/conv/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/conv/kernel/conv_universal.hpp"
#include "cutlass/conv/device/conv_universal_adapter.hpp"

namespace accel_module {
namespace {

using Element = @ELEMENT@;
using ElementAccumulator = float;
using ElementCompute = float;
constexpr cutlass::conv::Operator kConvOp = cutlass::conv::Operator::@OP@;
constexpr int kAlignment = 128 / cutlass::sizeof_bits<Element>::value;  // 16-byte TMA rows

using TileShape = cute::Shape<cute::Int<@TILE_M@>, @TILE_N@, cute::Shape<cute::Int<@TILE_K@>>>;
using ClusterShape = cute::Shape<cute::Int<@CLUSTER_M@>, cute::Int<@CLUSTER_N@>, cute::_1>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementCompute,
    Element, @LAYOUT_C@, kAlignment,
    Element, @LAYOUT_C@, kAlignment,
    @EPILOGUE@>::CollectiveOp;

using CollectiveMainloop = typename cutlass::conv::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, kConvOp,
    Element, cutlass::layout::TensorNHWC, kAlignment,
    Element, cutlass::layout::TensorNHWC, kAlignment,
    ElementAccumulator, TileShape, ClusterShape,
    cutlass::conv::collective::StageCountAutoCarveout<
        static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;

using ProblemShape = cutlass::conv::ConvProblemShape<kConvOp, CollectiveMainloop::DispatchPolicy::NumSpatialDimensions>;
using ConvKernel = cutlass::conv::kernel::ConvUniversal<ProblemShape, CollectiveMainloop, CollectiveEpilogue>;
using Conv = cutlass::conv::device::ConvUniversalAdapter<ConvKernel>;
using StrideC = typename ConvKernel::StrideC;
using StrideD = typename ConvKernel::StrideD;

static_assert(ProblemShape::RankS == 2, "2-D convolution");

#define ACCEL_CONV_PROBLEM_FORMAT \
  "n=%lld h=%lld w=%lld c=%lld k=%lld r=%lld s=%lld p=%lld q=%lld stride=%dx%d pad=%dx%d dilation=%dx%d"
#define ACCEL_CONV_PROBLEM_ARGS(a)                                                                          \
  static_cast<long long>((a)->n), static_cast<long long>((a)->h), static_cast<long long>((a)->w),            \
      static_cast<long long>((a)->c), static_cast<long long>((a)->k), static_cast<long long>((a)->r),        \
      static_cast<long long>((a)->s), static_cast<long long>((a)->p), static_cast<long long>((a)->q),        \
      (a)->stride_h, (a)->stride_w, (a)->pad_h, (a)->pad_w, (a)->dilation_h, (a)->dilation_w

bool aligned16(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

// One output extent of the forward convolution, or -1 when the dilated filter does not fit the padded input.
int64_t output_extent(int64_t input, int64_t filter, int64_t pad, int64_t stride, int64_t dilation) {
  const int64_t span = input + 2 * pad - dilation * (filter - 1) - 1;
  return span < 0 ? -1 : span / stride + 1;
}

// Checks `a` and builds the CUTLASS arguments; pointers are checked only when the kernel is about to run.
int make_arguments(const AccelConvArgs* a, bool check_pointers, typename Conv::Arguments* out, char* error,
                   size_t capacity) {
  if (a == nullptr) return accel_fail(kAccelInvalidArgument, error, capacity, "conv @DIRECTION@: null arguments");
  const int64_t extents[] = {a->n, a->h, a->w, a->c, a->k, a->r, a->s, a->p, a->q};
  const char names[] = "nhwckrspq";
  for (int i = 0; i < 9; ++i) {
    if (extents[i] <= 0) {
      return accel_fail(kAccelInvalidArgument, error, capacity, "conv @DIRECTION@: extent %c = %lld must be positive",
                  names[i], static_cast<long long>(extents[i]));
    }
    if (extents[i] > INT32_MAX) {
      return accel_fail(kAccelNotSupported, error, capacity,
                  "conv @DIRECTION@: extent %c = %lld exceeds CUTLASS's 32-bit convolution extents", names[i],
                  static_cast<long long>(extents[i]));
    }
  }
  if (a->stride_h < 1 || a->stride_w < 1 || a->dilation_h < 1 || a->dilation_w < 1 || a->pad_h < 0 ||
      a->pad_w < 0) {
    return accel_fail(kAccelInvalidArgument, error, capacity,
                "conv @DIRECTION@: strides and dilations must be >= 1 and padding >= 0 (" ACCEL_CONV_PROBLEM_FORMAT
                ")",
                ACCEL_CONV_PROBLEM_ARGS(a));
  }
  const int64_t p = output_extent(a->h, a->r, a->pad_h, a->stride_h, a->dilation_h);
  const int64_t q = output_extent(a->w, a->s, a->pad_w, a->stride_w, a->dilation_w);
  if (p != a->p || q != a->q) {
    return accel_fail(kAccelInvalidArgument, error, capacity,
                "conv @DIRECTION@: output extents p x q must be %lld x %lld for " ACCEL_CONV_PROBLEM_FORMAT,
                static_cast<long long>(p), static_cast<long long>(q), ACCEL_CONV_PROBLEM_ARGS(a));
  }
  if (a->c % kAlignment != 0 || a->k % kAlignment != 0) {
    return accel_fail(kAccelNotSupported, error, capacity,
                "conv @DIRECTION@: channels c = %lld and k = %lld must be multiples of %d (16-byte TMA rows)",
                static_cast<long long>(a->c), static_cast<long long>(a->k), kAlignment);
  }
  if (a->stride_h > 8 || a->stride_w > 8) {
    return accel_fail(kAccelNotSupported, error, capacity,
                "conv @DIRECTION@: traversal stride %dx%d above 8 (im2col TMA)", a->stride_h, a->stride_w);
  }
  if (kConvOp == cutlass::conv::Operator::kDgrad && (a->stride_h != 1 || a->stride_w != 1)) {
    return accel_fail(kAccelNotSupported, error, capacity,
                "conv @DIRECTION@: stride %dx%d; CUTLASS's sm_90 dgrad kernel is unit-stride only", a->stride_h,
                a->stride_w);
  }
  if (check_pointers) {
    const void* pointers[] = {a->@A@, a->@B@, a->@OUT@};
    const char* pointer_names[] = {"@A_NAME@ (@A@)", "@B_NAME@ (@B@)", "@OUT_NAME@ (@OUT@)"};
    for (int i = 0; i < 3; ++i) {
      if (pointers[i] == nullptr) {
        return accel_fail(kAccelInvalidArgument, error, capacity, "conv @DIRECTION@: %s is null", pointer_names[i]);
      }
      if (!aligned16(pointers[i])) {
        return accel_fail(kAccelNotSupported, error, capacity, "conv @DIRECTION@: %s is not 16-byte aligned (TMA)",
                    pointer_names[i]);
      }
    }
  }

  typename ProblemShape::TensorExtent shape_act{};
  shape_act[0] = static_cast<int>(a->n);
  shape_act[1] = static_cast<int>(a->h);
  shape_act[2] = static_cast<int>(a->w);
  shape_act[3] = static_cast<int>(a->c);
  typename ProblemShape::TensorExtent shape_flt{};
  shape_flt[0] = static_cast<int>(a->k);
  shape_flt[1] = static_cast<int>(a->r);
  shape_flt[2] = static_cast<int>(a->s);
  shape_flt[3] = static_cast<int>(a->c);
  typename ProblemShape::ShapePadding padding{};
  padding[0] = a->pad_h;
  padding[1] = a->pad_w;
  typename ProblemShape::TraversalStride traversal{};
  traversal[0] = a->stride_h;
  traversal[1] = a->stride_w;
  typename ProblemShape::ShapeDilation dilation{};
  dilation[0] = a->dilation_h;
  dilation[1] = a->dilation_w;
  const ProblemShape problem(cutlass::conv::Mode::kCrossCorrelation, shape_act, shape_flt, padding, padding,
                             traversal, dilation, 1);

  StrideC stride_c{};
  StrideD stride_d{};
@SET_STRIDES@
  typename ConvKernel::MainloopArguments mainloop{};
  mainloop.ptr_A = static_cast<const Element*>(a->@A@);
  mainloop.ptr_B = static_cast<const Element*>(a->@B@);
  typename ConvKernel::EpilogueArguments epilogue{};
  epilogue.thread.alpha = a->alpha;
  epilogue.thread.beta = a->beta;
  epilogue.ptr_C = static_cast<const Element*>(a->@OUT@);  // read only when beta != 0
  epilogue.dC = stride_c;
  epilogue.ptr_D = static_cast<Element*>(a->@OUT@);
  epilogue.dD = stride_d;
  *out = typename Conv::Arguments(problem, mainloop, epilogue);

  const cutlass::Status status = Conv::can_implement(*out);
  if (status != cutlass::Status::kSuccess) {
    return accel_fail(kAccelNotSupported, error, capacity,
                "conv @DIRECTION@: CUTLASS's sm_90 implicit GEMM cannot run " ACCEL_CONV_PROBLEM_FORMAT
                " (%s; im2col TMA needs padding <= 256, corners within [-128, 127], (r-1)*dilation_h and "
                "(s-1)*dilation_w below 255, and fewer than 2^31 output pixels)",
                ACCEL_CONV_PROBLEM_ARGS(a), cutlass::cutlassGetStatusString(status));
  }
  return kAccelOk;
}

}  // namespace
}  // namespace accel_module

extern "C" __attribute__((visibility("default"))) int accel_workspace_bytes(const void* args, size_t* bytes,
                                                                            char* error, size_t error_capacity) {
  using namespace accel_module;
  return accel_guarded("accel_workspace_bytes", error, error_capacity, [&]() -> int {
    if (bytes == nullptr) {
      return accel_fail(kAccelInvalidArgument, error, error_capacity, "conv @DIRECTION@: null workspace size output");
    }
    typename Conv::Arguments arguments{};
    const int result =
        make_arguments(static_cast<const AccelConvArgs*>(args), false, &arguments, error, error_capacity);
    if (result != kAccelOk) return result;
    *bytes = Conv::get_workspace_size(arguments);
    return kAccelOk;
  });
}

extern "C" __attribute__((visibility("default"))) int accel_run(const void* args, void* workspace,
                                                                size_t workspace_bytes, cudaStream_t stream,
                                                                char* error, size_t error_capacity) {
  using namespace accel_module;
  return accel_guarded("accel_run", error, error_capacity, [&]() -> int {
    typename Conv::Arguments arguments{};
    const int result = make_arguments(static_cast<const AccelConvArgs*>(args), true, &arguments, error, error_capacity);
    if (result != kAccelOk) return result;
    const size_t needed = Conv::get_workspace_size(arguments);
    if (needed > workspace_bytes || (needed > 0 && workspace == nullptr)) {
      return accel_fail(kAccelInvalidArgument, error, error_capacity,
                  "conv @DIRECTION@: workspace of %zu bytes at %p; the kernel needs %zu", workspace_bytes, workspace,
                  needed);
    }
    Conv conv;
    cutlass::Status status = conv.initialize(arguments, workspace, stream);
    if (status != cutlass::Status::kSuccess) {
      return accel_fail(kAccelCudaError, error, error_capacity,
                  "conv @DIRECTION@: initialize failed (%s; TMA descriptors or the kernel's shared-memory attribute)",
                  cutlass::cutlassGetStatusString(status));
    }
    status = conv.run(stream);
    if (status != cutlass::Status::kSuccess) {
      return accel_fail(kAccelCudaError, error, error_capacity, "conv @DIRECTION@: kernel launch failed (%s)",
                  cutlass::cutlassGetStatusString(status));
    }
    return kAccelOk;
  });
}
)cu";

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

  std::string body(kConvModule);
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

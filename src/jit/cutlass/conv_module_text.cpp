// The CUDA C++ of a convolution module after the prologue, with its placeholders (@...@) that render_conv.cpp
// fills in: the CUTLASS sm_90 implicit-GEMM convolution (render_conv.cpp says what it supports) and the
// module_abi.hpp entry points over AccelConvArgs.
#include <string_view>

#include "jit/cutlass/render_parts.hpp"

namespace accel::jit::cutlass {
namespace {

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

std::string_view conv_module_text() noexcept { return kConvModule; }

}  // namespace accel::jit::cutlass

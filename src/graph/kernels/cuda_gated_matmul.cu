// A gated MLP's up projection and its gate in one GEMM (sm_90a): y = act(x Wgᵀ) * (x Wuᵀ), the product never
// written. The weight is gate|up interleaved by eight rows (gated_matmul_weight_row), so that every thread of the
// warpgroup MMA holds each output's gate and up accumulators side by side (its accumulator fragment steps eight
// columns between value groups); the epilogue multiplies them and writes half the tile's width through shared memory
// in 16-byte stores. The mainloop is CUTLASS's TMA warp-specialised one (cooperative, 128 x 256 tiles, clusters of
// 2 x 1), assembled by its collective builder.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cutlass/cutlass.h>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/kernel_hardware_info.h>
#include <cute/tensor.hpp>
#include <cutlass/epilogue/collective/detail.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_gated_matmul.hpp"

namespace accel::graph::cuda {
namespace {

using namespace cute;

// The epilogue: an operator-style CUTLASS epilogue (no TMA), run by Sm90TmaWarpSpecializedAdapter, for a CTA tile of
// kRows x 2 kColumns products, kColumns outputs: the tile's outputs go through shared memory (rows padded by 8
// elements, so that a warp's pairs fall in 32 banks) and leave in 16-byte stores. Storing each thread's pairs
// straight from its registers was slower in every call of docs/PERFORMANCE.md §73.
template <class Output, Activation kActivation, int kRows, int kColumns>
class GatedStore {
 public:
  using ElementC = void;
  using ElementD = Output;
  using StrideC = Stride<int64_t, _1, int64_t>;
  using StrideD = StrideC;
  using ElementAccumulator = float;
  using EpilogueSchedule = cutlass::epilogue::NoSmemWarpSpecialized;
  using DispatchPolicy = EpilogueSchedule;
  using GmemTiledCopyC = void;
  using GmemTiledCopyD = void;
  static constexpr int kPitch = kColumns + 8;  // 16-byte rows
  static_assert(kPitch % 8 == 0);
  struct SharedStorage {
    alignas(16) Output tile[kRows * kPitch];
  };
  using TensorStorage = SharedStorage;
  struct ThreadEpilogueOp {};  // named by GemmUniversalAdapter, never used

  struct Arguments {
    Output* y = nullptr;
    int64_t ldy = 0;
  };
  using Params = Arguments;

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return args;
  }
  template <class ProblemShape>
  static size_t get_workspace_size(ProblemShape const&, Arguments const&) {
    return 0;
  }
  template <class ProblemShape>
  static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*, cudaStream_t,
                                              cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const& args) {
    return args.y != nullptr;
  }

  CUTLASS_HOST_DEVICE explicit GatedStore(Params const& params, SharedStorage const& = SharedStorage())
      : params_(params) {}

  CUTLASS_DEVICE bool is_source_needed() { return false; }

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine, class FrgLayout,
            class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem, BlockShapeMNK block_shape, BlockCoordMNKL block_coord,
                                 Tensor<FrgEngine, FrgLayout> const& accumulators, TiledMma tiled_mma, ResidueMNK,
                                 int thread_idx, char* shared) {
    Output* tile = reinterpret_cast<Output*>(shared);
    static_assert(decltype(size<0>(block_shape))::value == kRows &&
                  decltype(size<1>(block_shape))::value == 2 * kColumns);
    constexpr int kThreads = decltype(size(tiled_mma))::value;
    const int rows = get<0>(problem);
    const int width = get<1>(problem) / 2;
    Tensor coordinates = make_identity_tensor(take<0, 2>(block_shape));
    Tensor thread_coordinates = tiled_mma.get_thread_slice(thread_idx).partition_C(coordinates);
    // The tile before may still be leaving shared memory.
    cutlass::arch::NamedBarrier::sync(kThreads, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
    static_assert(decltype(size(accumulators))::value % 8 == 0);
    // A warpgroup MMA's fragment, per value group of 8: columns c and c + 1 of rows r and r + 8, then the same four
    // eight columns on; with the weight interleaved by eight, the first four are gates and the next four their ups.
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < size(accumulators); i += 8) {
      CUTLASS_PRAGMA_UNROLL
      for (int row_half = 0; row_half < 2; ++row_half) {
        const int g = i + 2 * row_half;
        const int row = get<0>(thread_coordinates(g));
        const int column = get<1>(thread_coordinates(g));
        const float y0 = detail::activate_before_rounding(kActivation, accumulators(g)) * accumulators(g + 4);
        const float y1 = detail::activate_before_rounding(kActivation, accumulators(g + 1)) * accumulators(g + 5);
        store_pair(tile + row * kPitch + 8 * (column / 16) + column % 8, y0, y1);
      }
    }
    cutlass::arch::NamedBarrier::sync(kThreads, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
    const int first_row = get<0>(block_coord) * kRows, first_column = get<1>(block_coord) * kColumns;
    constexpr int kVectorsPerRow = kColumns / 8;
    CUTLASS_PRAGMA_UNROLL
    for (int v = thread_idx; v < kRows * kVectorsPerRow; v += kThreads) {
      const int row = v / kVectorsPerRow, column = v % kVectorsPerRow * 8;
      if (first_row + row < rows && first_column + column < width)
        *reinterpret_cast<uint4*>(params_.y + int64_t{first_row + row} * params_.ldy + first_column + column) =
            *reinterpret_cast<const uint4*>(tile + row * kPitch + column);
    }
  }

 private:
  CUTLASS_DEVICE static void store_pair(Output* out, float a, float b) {
    if constexpr (std::is_same_v<Output, cutlass::bfloat16_t>)
      *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(a, b);
    else
      *reinterpret_cast<__half2*>(out) = __floats2half2_rn(a, b);
  }

  Params params_;
};

template <class Element, Activation kActivation>
struct GatedGemm {
  using TileShape = Shape<_128, _256, _64>;
  using ClusterShape = Shape<_2, _1, _1>;
  using Epilogue =
      cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<GatedStore<Element, kActivation, 128, 128>>;
  static constexpr int kAlignment = 8;  // 16 bytes, for TMA
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, kAlignment, Element,
      cutlass::layout::ColumnMajor, kAlignment, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static cudaError_t run(const void* x, const void* w, int rows, int width, int k, void* y, int sm_count,
                         const GatedMatmulTuning& tuning, cudaStream_t stream) {
    using StrideA = typename Kernel::StrideA;
    using StrideB = typename Kernel::StrideB;
    const int columns = 2 * width;
    typename Gemm::Arguments arguments{cutlass::gemm::GemmUniversalMode::kGemm,
                                       {rows, columns, k, 1},
                                       {static_cast<const Element*>(x), make_stride(int64_t{k}, _1{}, int64_t{0}),
                                        static_cast<const Element*>(w), make_stride(int64_t{k}, _1{}, int64_t{0})},
                                       {static_cast<Element*>(y), int64_t{width}}};
    static_assert(std::is_same_v<StrideA, Stride<int64_t, _1, int64_t>>);
    static_assert(std::is_same_v<StrideB, Stride<int64_t, _1, int64_t>>);
    arguments.hw_info.sm_count = sm_count;
    arguments.scheduler.max_swizzle_size = tuning.swizzle;
    using Raster = cutlass::gemm::kernel::detail::RasterOrderOptions;
    arguments.scheduler.raster_order = tuning.raster == GatedMatmulRaster::along_m   ? Raster::AlongM
                                       : tuning.raster == GatedMatmulRaster::along_n ? Raster::AlongN
                                                                                     : Raster::Heuristic;
    Gemm gemm;
    if (gemm.can_implement(arguments) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;
    if (Gemm::get_workspace_size(arguments) != 0) return cudaErrorInvalidValue;
    if (gemm.initialize(arguments, nullptr, stream) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;
    if (gemm.run(stream) != cutlass::Status::kSuccess) {
      const cudaError_t error = cudaGetLastError();
      return error == cudaSuccess ? cudaErrorLaunchFailure : error;
    }
    return cudaGetLastError();
  }
};

template <class Element>
cudaError_t run_activation(Activation activation, const GatedMatmulTuning& tuning, const void* x, const void* w,
                           int rows, int width, int k, void* y, int sm_count, cudaStream_t stream) {
  switch (activation) {
    case Activation::silu:
      return GatedGemm<Element, Activation::silu>::run(x, w, rows, width, k, y, sm_count, tuning, stream);
    case Activation::gelu_erf:
      return GatedGemm<Element, Activation::gelu_erf>::run(x, w, rows, width, k, y, sm_count, tuning, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

bool gated_matmul_runs_here() {
  int device = 0, major = 0, minor = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
         cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess && major == 9 &&
         minor == 0;
}

bool gated_matmul_fits(DType dtype, Activation activation, std::int64_t rows, std::int64_t width, std::int64_t k,
                       const void* x, const void* w, const void* y) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return (dtype == DType::bf16 || dtype == DType::f16) &&
         (activation == Activation::silu || activation == Activation::gelu_erf) && rows > 0 && width > 0 && k > 0 &&
         width % 8 == 0 && k % 8 == 0 && rows <= (1 << 30) && 2 * width <= (1 << 30) && k <= (1 << 30) && aligned(x) &&
         aligned(w) && aligned(y);
}

cudaError_t gated_matmul(DType dtype, Activation activation, const void* x, const void* w, std::int64_t rows,
                         std::int64_t width, std::int64_t k, void* y, cudaStream_t stream, GatedMatmulTuning tuning) {
  if (!gated_matmul_fits(dtype, activation, rows, width, k, x, w, y)) return cudaErrorInvalidValue;
  if (tuning.swizzle != 1 && tuning.swizzle != 2 && tuning.swizzle != 4 && tuning.swizzle != 8)
    return cudaErrorInvalidValue;
  if (!gated_matmul_runs_here()) return cudaErrorInvalidDevice;
  int device = 0, sm_count = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status == cudaSuccess) status = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  if (status != cudaSuccess) return status;
  const int r = static_cast<int>(rows), n = static_cast<int>(width), kk = static_cast<int>(k);
  if (dtype == DType::bf16)
    return run_activation<cutlass::bfloat16_t>(activation, tuning, x, w, r, n, kk, y, sm_count, stream);
  return run_activation<cutlass::half_t>(activation, tuning, x, w, r, n, kk, y, sm_count, stream);
}

}  // namespace accel::graph::cuda

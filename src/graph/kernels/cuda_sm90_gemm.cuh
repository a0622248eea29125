// What the fused GEMMs on CUTLASS's Hopper mainloop share (cuda_gated_matmul.cu, cuda_rope_matmul.cu; sm_90a code):
// the members of an operator-style epilogue that CUTLASS's adapter names but a fusion does not use, and the launch of
// x Wᵀ (x [rows, k] row-major, W [columns, k] row-major) through CUTLASS's TMA warp-specialised cooperative mainloop
// with such an epilogue, assembled by its collective builder.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cutlass/cutlass.h>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/kernel_hardware_info.h>
#include <cute/tensor.hpp>
#include <cutlass/epilogue/collective/detail.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include <cstdint>
#include <type_traits>

#include "graph/kernels/cuda_sm90.hpp"

namespace accel::graph::cuda::sm90 {

// An operator-style CUTLASS epilogue (no TMA, run by Sm90TmaWarpSpecializedAdapter) whose CTA tile leaves through
// `kSharedElements` elements of shared memory, its arguments `Args` (with the output `y`): a fusion derives from it and
// adds a constructor from Params and its operator().
template <class Output, class Args, int kSharedElements>
struct EpilogueMembers {
  using ElementC = void;
  using ElementD = Output;
  using StrideC = cute::Stride<int64_t, cute::_1, int64_t>;
  using StrideD = StrideC;
  using ElementAccumulator = float;
  using EpilogueSchedule = cutlass::epilogue::NoSmemWarpSpecialized;
  using DispatchPolicy = EpilogueSchedule;
  using GmemTiledCopyC = void;
  using GmemTiledCopyD = void;
  struct SharedStorage {
    alignas(16) Output tile[kSharedElements];
  };
  using TensorStorage = SharedStorage;
  struct ThreadEpilogueOp {};  // named by GemmUniversalAdapter, never used
  using Arguments = Args;
  using Params = Args;

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
  CUTLASS_DEVICE bool is_source_needed() { return false; }
};

// y = epilogue(x Wᵀ) for a [rows, columns] product on `TileShape` tiles in clusters of `ClusterShape`, the mainloop's
// stages sized around the epilogue's shared memory. `KernelSchedule`: cooperative (both math warpgroups on one tile,
// then its epilogue) or ping-pong (each warpgroup its own tile, one's epilogue while the other multiplies; the
// epilogues take turns, so they may share the epilogue's shared memory and named barrier).
template <class Element, class EpilogueOp, class TileShape, class KernelSchedule,
          class ClusterShape = cute::Shape<cute::_2, cute::_1, cute::_1>>
struct FusedGemm {
  using Epilogue = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<EpilogueOp>;
  static constexpr int kAlignment = 8;  // 16 bytes, for TMA
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, cutlass::layout::RowMajor, kAlignment, Element,
      cutlass::layout::ColumnMajor, kAlignment, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      KernelSchedule>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static cudaError_t run(const void* x, const void* w, int rows, int columns, int k,
                         typename EpilogueOp::Arguments epilogue, const TileSchedule& schedule, cudaStream_t stream) {
    using cute::_1;
    using StrideA = typename Kernel::StrideA;
    using StrideB = typename Kernel::StrideB;
    static_assert(std::is_same_v<StrideA, cute::Stride<int64_t, _1, int64_t>>);
    static_assert(std::is_same_v<StrideB, cute::Stride<int64_t, _1, int64_t>>);
    int device = 0, sm_count = 0;
    cudaError_t status = cudaGetDevice(&device);
    if (status == cudaSuccess) status = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
    if (status != cudaSuccess) return status;
    typename Gemm::Arguments arguments{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {rows, columns, k, 1},
        {static_cast<const Element*>(x), cute::make_stride(int64_t{k}, _1{}, int64_t{0}),
         static_cast<const Element*>(w), cute::make_stride(int64_t{k}, _1{}, int64_t{0})},
        epilogue};
    arguments.hw_info.sm_count = sm_count;
    arguments.scheduler.max_swizzle_size = schedule.swizzle;
    using Raster = cutlass::gemm::kernel::detail::RasterOrderOptions;
    arguments.scheduler.raster_order = schedule.raster == TileRaster::along_m   ? Raster::AlongM
                                       : schedule.raster == TileRaster::along_n ? Raster::AlongN
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

// Experiment: the tile shapes, schedules and clusters TileSchedule::variant names (0: cooperative 128 x 256, 2 x 1).
template <class Run>
cudaError_t dispatch_variant(int variant, Run&& run) {
  using namespace cute;
  using Coop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using Ping = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
  using C21 = Shape<_2, _1, _1>;
  using C12 = Shape<_1, _2, _1>;
  switch (variant) {
    case 0: return run.template operator()<128, 256, Coop, C21>();
    case 1: return run.template operator()<64, 256, Ping, C21>();
    case 2: return run.template operator()<256, 128, Coop, C21>();
    case 3: return run.template operator()<256, 128, Coop, C12>();
    case 4: return run.template operator()<128, 256, Coop, C12>();
    case 5: return run.template operator()<64, 256, Ping, C12>();
    case 6: return run.template operator()<128, 128, Ping, C21>();
    case 7: return run.template operator()<128, 128, Coop, C21>();
    default: return cudaErrorInvalidValue;
  }
}

// Two floats to adjacent 16-bit outputs, rounded to nearest.
template <class Output>
CUTLASS_DEVICE void store_pair(Output* out, float a, float b) {
  if constexpr (std::is_same_v<Output, cutlass::bfloat16_t>)
    *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(a, b);
  else
    *reinterpret_cast<__half2*>(out) = __floats2half2_rn(a, b);
}

// A tile staged in shared memory ([kRows, kColumns], rows kPitch elements apart) to y's rows from `first_row` and
// columns from `first_column`, those within [rows, columns) (columns a multiple of 8), in 16-byte stores.
template <int kRows, int kColumns, int kPitch, int kThreads, class Output>
CUTLASS_DEVICE void write_tile(const Output* tile, Output* y, int64_t ldy, int first_row, int first_column, int rows,
                               int columns, int thread_idx) {
  constexpr int kVectorsPerRow = kColumns / 8;
  CUTLASS_PRAGMA_UNROLL
  for (int v = thread_idx; v < kRows * kVectorsPerRow; v += kThreads) {
    const int row = v / kVectorsPerRow, column = v % kVectorsPerRow * 8;
    if (first_row + row < rows && first_column + column < columns)
      *reinterpret_cast<uint4*>(y + int64_t{first_row + row} * ldy + first_column + column) =
          *reinterpret_cast<const uint4*>(tile + row * kPitch + column);
  }
}

}  // namespace accel::graph::cuda::sm90

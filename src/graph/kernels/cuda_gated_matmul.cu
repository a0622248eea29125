// A gated MLP's up projection and its gate in one GEMM (sm_90a): y = act(x Wgᵀ) * (x Wuᵀ), the product never
// written. The weight is gate|up interleaved by eight rows (gated_matmul_weight_row), so that every thread of the
// warpgroup MMA holds each output's gate and up accumulators side by side (its accumulator fragment steps eight
// columns between value groups); the epilogue multiplies them and writes half the tile's width through shared memory
// in 16-byte stores. The mainloop is CUTLASS's TMA warp-specialised one (cooperative, 128 x 256 tiles, clusters of
// 2 x 1), assembled by its collective builder.
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_gated_matmul.hpp"
#include "graph/kernels/cuda_sm90_gemm.cuh"

namespace accel::graph::cuda {
namespace {

using namespace cute;

struct GatedArguments {
  void* y = nullptr;
  int64_t ldy = 0;  // the width
};

// The epilogue for a CTA tile of kRows x 2 kColumns products, kColumns outputs: the tile's outputs go through shared
// memory (rows padded by 8 elements, so that a warp's pairs fall in 32 banks) and leave in 16-byte stores. Storing
// each thread's pairs straight from its registers was slower in every call of docs/PERFORMANCE.md §73.
template <class Output, Activation kActivation, int kRows, int kColumns>
class GatedStore : public sm90::EpilogueMembers<Output, GatedArguments, kRows*(kColumns + 8)> {
  using Base = sm90::EpilogueMembers<Output, GatedArguments, kRows*(kColumns + 8)>;

 public:
  static constexpr int kPitch = kColumns + 8;  // 16-byte rows
  static_assert(kPitch % 8 == 0);
  using typename Base::Params;
  using typename Base::SharedStorage;

  CUTLASS_HOST_DEVICE explicit GatedStore(Params const& params, SharedStorage const& = SharedStorage())
      : params_(params) {}

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
        const float y0 = detail::activate(kActivation, accumulators(g)) * accumulators(g + 4);
        const float y1 = detail::activate(kActivation, accumulators(g + 1)) * accumulators(g + 5);
        sm90::store_pair(tile + row * kPitch + 8 * (column / 16) + column % 8, y0, y1);
      }
    }
    cutlass::arch::NamedBarrier::sync(kThreads, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
    sm90::write_tile<kRows, kColumns, kPitch, kThreads>(tile, static_cast<Output*>(params_.y), params_.ldy,
                                                        get<0>(block_coord) * kRows, get<1>(block_coord) * kColumns,
                                                        rows, width, thread_idx);
  }

 private:
  Params params_;
};

template <class Element>
cudaError_t run_activation(Activation activation, const TileSchedule& schedule, const void* x, const void* w, int rows,
                           int width, int k, void* y, cudaStream_t stream) {
  const GatedArguments arguments{.y = y, .ldy = width};
  const auto run = [&]<Activation kActivation, int kRows, int kTileColumns, class KernelSchedule, class Cluster>() {
    using Gemm = sm90::FusedGemm<Element, GatedStore<Element, kActivation, kRows, kTileColumns / 2>,
                                 Shape<Int<kRows>, Int<kTileColumns>, _64>, KernelSchedule, Cluster>;
    return Gemm::run(x, w, rows, 2 * width, k, arguments, schedule, stream);
  };
  using Coop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using C21 = Shape<_2, _1, _1>;
  constexpr bool kBf16 = std::is_same_v<Element, cutlass::bfloat16_t>;
  switch (activation) {
    case Activation::silu:
      if constexpr (kBf16)
        return sm90::dispatch_variant(
            schedule.variant, [&]<int kRows, int kTileColumns, class KernelSchedule, class Cluster>() {
              return run.template operator()<Activation::silu, kRows, kTileColumns, KernelSchedule, Cluster>();
            });
      return run.template operator()<Activation::silu, 128, 256, Coop, C21>();
    case Activation::gelu_erf:
      if constexpr (!kBf16)
        return sm90::dispatch_variant(
            schedule.variant, [&]<int kRows, int kTileColumns, class KernelSchedule, class Cluster>() {
              return run.template operator()<Activation::gelu_erf, kRows, kTileColumns, KernelSchedule, Cluster>();
            });
      return run.template operator()<Activation::gelu_erf, 128, 256, Coop, C21>();
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

bool gated_matmul_fits(DType dtype, Activation activation, std::int64_t rows, std::int64_t width, std::int64_t k,
                       const void* x, const void* w, const void* y) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return (dtype == DType::bf16 || dtype == DType::f16) &&
         (activation == Activation::silu || activation == Activation::gelu_erf) && rows > 0 && width > 0 && k > 0 &&
         width % 8 == 0 && k % 8 == 0 && rows <= (1 << 30) && 2 * width <= (1 << 30) && k <= (1 << 30) && aligned(x) &&
         aligned(w) && aligned(y);
}

cudaError_t gated_matmul(DType dtype, Activation activation, const void* x, const void* w, std::int64_t rows,
                         std::int64_t width, std::int64_t k, void* y, cudaStream_t stream, TileSchedule schedule) {
  if (!gated_matmul_fits(dtype, activation, rows, width, k, x, w, y) || !valid_schedule(schedule))
    return cudaErrorInvalidValue;
  if (!sm90a_runs_here()) return cudaErrorInvalidDevice;
  const int r = static_cast<int>(rows), n = static_cast<int>(width), kk = static_cast<int>(k);
  if (dtype == DType::bf16) return run_activation<cutlass::bfloat16_t>(activation, schedule, x, w, r, n, kk, y, stream);
  return run_activation<cutlass::half_t>(activation, schedule, x, w, r, n, kk, y, stream);
}

}  // namespace accel::graph::cuda

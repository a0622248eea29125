// A packed q|k|v projection and its rope in one GEMM (sm_90a): the product's tile of 128 rows by 256 columns (two
// heads of 128, or four of 64) never leaves the SM unrotated. A warpgroup MMA's accumulator fragment gives each thread
// columns 2t and 2t + 1 of every eight (t = lane % 4) of rows r and r + 8: so pair i of a head (columns i and
// i + head_dim / 2) lies in one thread, and a row's head in the four threads of a quad, whose norm is two shuffles.
// The epilogue rounds the product to the storage type, normalises and rotates in registers exactly as cuda::rope does
// over the rounded product (the same float operations, angles by reduced_sincos), and writes the tile through shared
// memory in 16-byte stores, as the gated GEMM does (cuda_gated_matmul.cu).
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_rope_matmul.hpp"
#include "graph/kernels/cuda_sm90_gemm.cuh"

namespace accel::graph::cuda {
namespace {

using namespace cute;

struct RopeArguments {
  void* y = nullptr;
  int64_t ldy = 0;  // the product's columns
  const void* bias = nullptr;
  const std::int32_t* positions = nullptr;
  const void* query_norm = nullptr;
  const void* key_norm = nullptr;
  int heads = 0, kv_heads = 0;
  float theta = 0, eps = 0;
};

// The staged tile (rows padded by 8 elements: 16-byte rows, and a warp's pairs fall in 32 banks), then the inverse
// frequencies of a head's pairs (floats, in the room of 2 kHeadDim / 2 elements).
template <int kRows, int kColumns, int kHeadDim>
constexpr int kSharedElements = kRows*(kColumns + 8) + kHeadDim;

template <class Output, int kHeadDim, int kRows, int kColumns>
class RopeStore : public sm90::EpilogueMembers<Output, RopeArguments, kSharedElements<kRows, kColumns, kHeadDim>> {
  using Base = sm90::EpilogueMembers<Output, RopeArguments, kSharedElements<kRows, kColumns, kHeadDim>>;
  static constexpr int kPitch = kColumns + 8;
  using Element = std::conditional_t<std::is_same_v<Output, cutlass::bfloat16_t>, __nv_bfloat16, __half>;
  static constexpr int kHalf = kHeadDim / 2;
  static constexpr int kHeadGroups = kHeadDim / 8;  // a head's groups of eight columns
  static constexpr int kPairs = kHalf / 4;          // of a head's row, in one thread
  static constexpr int kHeadsPerTile = kColumns / kHeadDim;
  static_assert(kColumns % kHeadDim == 0 && kHalf % 8 == 0);

 public:
  using typename Base::Params;
  using typename Base::SharedStorage;

  CUTLASS_HOST_DEVICE explicit RopeStore(Params const& params, SharedStorage const& = SharedStorage())
      : params_(params) {}

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine, class FrgLayout,
            class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem, BlockShapeMNK block_shape, BlockCoordMNKL block_coord,
                                 Tensor<FrgEngine, FrgLayout> const& accumulators, TiledMma tiled_mma, ResidueMNK,
                                 int thread_idx, char* shared) {
    Output* tile = reinterpret_cast<Output*>(shared);
    float* inverse = reinterpret_cast<float*>(tile + kRows * kPitch);
    static_assert(decltype(size<0>(block_shape))::value == kRows && decltype(size<1>(block_shape))::value == kColumns);
    constexpr int kThreads = decltype(size(tiled_mma))::value;
    // Per block of 64 rows of a warpgroup, two rows (r, r + 8) of every eight columns of the tile: the fragment's value
    // group j of four is columns 8 j + 2t, 8 j + 2t + 1 of row r, then the same of row r + 8.
    constexpr int kBlockValues = kColumns / 2;
    constexpr int kRowBlocks = decltype(size(accumulators))::value / kBlockValues;
    static_assert(kRowBlocks * kBlockValues == decltype(size(accumulators))::value &&
                  kThreads * kRowBlocks * kBlockValues == kRows * kColumns);
    const int rows = get<0>(problem), columns = get<1>(problem);
    const int first_row = get<0>(block_coord) * kRows, first_column = get<1>(block_coord) * kColumns;
    const int first_head = first_column / kHeadDim, rotated = params_.heads + params_.kv_heads;
    Tensor coordinates = make_identity_tensor(take<0, 2>(block_shape));
    Tensor thread_coordinates = tiled_mma.get_thread_slice(thread_idx).partition_C(coordinates);
    // The tile before has read the frequencies; its staged tile may still be leaving shared memory.
    const bool rotates = first_head < rotated;
    if (rotates && thread_idx < kHalf)
      inverse[thread_idx] = detail::rope_inverse_frequency(thread_idx, kHeadDim, params_.theta);
    cutlass::arch::NamedBarrier::sync(kThreads, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
    const auto* bias = static_cast<const Element*>(params_.bias);
    CUTLASS_PRAGMA_UNROLL
    for (int row_set = 0; row_set < 2 * kRowBlocks; ++row_set) {
      const int first_value = row_set / 2 * kBlockValues + 2 * (row_set % 2);
      const int row = get<0>(thread_coordinates(first_value));
      float sines[kPairs], cosines[kPairs];
      if (rotates) {
        const auto position = static_cast<float>(first_row + row < rows ? params_.positions[first_row + row] : 0);
        CUTLASS_PRAGMA_UNROLL
        for (int p = 0; p < kPairs; ++p) {
          const int i = get<1>(thread_coordinates(4 * (p / 2) + p % 2));  // the tile's first head
          detail::reduced_sincos(position * inverse[i], &sines[p], &cosines[p]);
        }
      }
      CUTLASS_PRAGMA_UNROLL
      for (int h = 0; h < kHeadsPerTile; ++h) {
        // The head's columns: v[p] and v[kPairs + p] a pair.
        float v[2 * kPairs];
        CUTLASS_PRAGMA_UNROLL
        for (int q = 0; q < 2 * kPairs; ++q) {
          const int g = first_value + 4 * (h * kHeadGroups + q / 2) + q % 2;
          float product = accumulators(g);
          if (bias != nullptr) {
            const int column = first_column + get<1>(thread_coordinates(g));
            if (column < columns) product += detail::to_float(bias[column]);
          }
          v[q] = rounded(product);
        }
        const int head = first_head + h;
        if (head < rotated) {
          if (const auto* gamma =
                  static_cast<const Element*>(head < params_.heads ? params_.query_norm : params_.key_norm);
              gamma != nullptr) {
            float squares = 0.0f;
            CUTLASS_PRAGMA_UNROLL
            for (int q = 0; q < 2 * kPairs; ++q) squares += v[q] * v[q];
            squares += __shfl_xor_sync(0xffffffffu, squares, 1);
            squares += __shfl_xor_sync(0xffffffffu, squares, 2);
            const float scale = 1.0f / sqrtf(squares / static_cast<float>(kHeadDim) + params_.eps);
            CUTLASS_PRAGMA_UNROLL
            for (int q = 0; q < 2 * kPairs; ++q) {
              const int i = get<1>(thread_coordinates(4 * (q / 2) + q % 2));  // within the tile's first head
              v[q] = rounded(v[q] * scale * detail::to_float(gamma[i]));
            }
          }
          CUTLASS_PRAGMA_UNROLL
          for (int p = 0; p < kPairs; ++p) detail::rotate_pair(v[p], v[kPairs + p], cosines[p], sines[p]);
        }
        CUTLASS_PRAGMA_UNROLL
        for (int q = 0; q < 2 * kPairs; q += 2) {
          const int column = get<1>(thread_coordinates(4 * (h * kHeadGroups + q / 2)));
          sm90::store_pair(tile + row * kPitch + column, v[q], v[q + 1]);
        }
      }
    }
    cutlass::arch::NamedBarrier::sync(kThreads, cutlass::arch::ReservedNamedBarriers::EpilogueBarrier);
    sm90::write_tile<kRows, kColumns, kPitch, kThreads>(tile, static_cast<Output*>(params_.y), params_.ldy, first_row,
                                                        first_column, rows, columns, thread_idx);
  }

 private:
  CUTLASS_DEVICE static float rounded(float x) { return detail::to_float(detail::from_float<Element>(x)); }

  Params params_;
};

template <class Element>
cudaError_t run_head_dim(const RopeArguments& arguments, int head_dim, const TileSchedule& schedule, const void* x,
                         const void* w, int rows, int k, cudaStream_t stream) {
  const int columns = static_cast<int>(arguments.ldy);
  const auto run = [&]<int kHeadDim, int kRows, int kTileColumns, class KernelSchedule, class Cluster>() {
    using Gemm = sm90::FusedGemm<Element, RopeStore<Element, kHeadDim, kRows, kTileColumns>,
                                 Shape<Int<kRows>, Int<kTileColumns>, _64>, KernelSchedule, Cluster>;
    return Gemm::run(x, w, rows, columns, k, arguments, schedule, stream);
  };
  if (head_dim == 128 && std::is_same_v<Element, cutlass::bfloat16_t>)
    return sm90::dispatch_variant(schedule.variant,
                                  [&]<int kRows, int kTileColumns, class KernelSchedule, class Cluster>() {
                                    return run.template operator()<128, kRows, kTileColumns, KernelSchedule, Cluster>();
                                  });
  using Coop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using C21 = Shape<_2, _1, _1>;
  if (head_dim == 128) return run.template operator()<128, 128, 256, Coop, C21>();
  return run.template operator()<64, 128, 256, Coop, C21>();
}

}  // namespace

bool rope_matmul_fits(DType dtype, std::int64_t rows, std::int64_t k, const RopeMatmulHeads& heads, const void* x,
                      const void* w, const void* bias, const void* y) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const std::int64_t columns = std::int64_t{heads.heads + 2 * heads.kv_heads} * heads.head_dim;
  return (dtype == DType::bf16 || dtype == DType::f16) && (heads.head_dim == 64 || heads.head_dim == 128) &&
         heads.heads > 0 && heads.kv_heads > 0 && heads.positions != nullptr &&
         (heads.query_norm != nullptr) == (heads.key_norm != nullptr) && rows > 0 && k > 0 && k % 8 == 0 &&
         rows <= (1 << 30) && columns <= (1 << 30) && k <= (1 << 30) && aligned(x) && aligned(w) && aligned(bias) &&
         aligned(y) && y != nullptr;
}

cudaError_t rope_matmul(DType dtype, const void* x, const void* w, const void* bias, std::int64_t rows, std::int64_t k,
                        const RopeMatmulHeads& heads, void* y, cudaStream_t stream, TileSchedule schedule) {
  if (!rope_matmul_fits(dtype, rows, k, heads, x, w, bias, y) || !valid_schedule(schedule))
    return cudaErrorInvalidValue;
  if (!sm90a_runs_here()) return cudaErrorInvalidDevice;
  const RopeArguments arguments{.y = y,
                                .ldy = std::int64_t{heads.heads + 2 * heads.kv_heads} * heads.head_dim,
                                .bias = bias,
                                .positions = heads.positions,
                                .query_norm = heads.query_norm,
                                .key_norm = heads.key_norm,
                                .heads = heads.heads,
                                .kv_heads = heads.kv_heads,
                                .theta = heads.theta,
                                .eps = heads.eps};
  const int r = static_cast<int>(rows), kk = static_cast<int>(k);
  if (dtype == DType::bf16)
    return run_head_dim<cutlass::bfloat16_t>(arguments, heads.head_dim, schedule, x, w, r, kk, stream);
  return run_head_dim<cutlass::half_t>(arguments, heads.head_dim, schedule, x, w, r, kk, stream);
}

}  // namespace accel::graph::cuda

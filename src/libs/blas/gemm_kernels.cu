// f32 GEMM of small matrices on a kernel of our own (src/libs/blas/blas_kernels.hpp): a block of 256 threads per 8 x 8
// tile of C, op(A) and op(B) staged through shared memory 64 terms of the sum at a time, the next stage's loads in
// flight while the block sums the current one. A small product's time is its round trips to memory and its reads of
// shared memory, so each stage is one round trip (every load of a stage is issued before any is used), and each
// output's sum is split four ways: the four lanes of a warp that share an output each sum every fourth term (16 of a
// stage, read from shared memory without bank conflicts), then add their sums by shuffles. Against one output a
// thread over 16 x 16 tiles, that is a quarter of the reads of shared memory a block makes and four times the blocks.
// Every layout is strides, so one kernel takes both orders and both transposes. Launched chained
// (core/chained_launch.cuh): its blocks are scheduled while the kernel before it ends. A recorded chain of 20 64³
// products and an FFT took 47-52 µs on it against 62-65 on 16 x 16 tiles of one output a thread (PERFORMANCE.md §92).
// A plain product (one member, no beta, bias or activation) takes a form of its own without the batch's loop, the
// epilogue's reads or 64-bit offsets: 1.29 µs a 64³ product in a chain against 1.74 (§106).
#include "core/chained_launch.cuh"
#include "libs/blas/kernel_common.cuh"

#include <limits>
#include <type_traits>

namespace accel::blas {
namespace {

using namespace kernels;

constexpr int kTile = 8;                                             // rows and columns of C a block computes
constexpr int kDepth = 64;                                           // terms of the sum a stage holds
constexpr int kSplit = 4;                                            // lanes that share an output's sum
constexpr int kLoads = kTile * kDepth / static_cast<int>(kThreads);  // elements of each operand a thread loads a stage
// A staged operand row (a row of op(A) or a column of op(B)) is kDepth terms and 4 words of padding: lane
// (column c, part g) reads word 4 c + g + 4 s of a bank row at step s, 32 lanes on 32 banks, and a warp storing
// eight rows of four terms writes 32 banks too.
constexpr int kRowWords = kDepth + 4;
static_assert(kTile * kTile * kSplit == static_cast<int>(kThreads) && kLoads >= 1);

// The bounds of small_gemm (PERFORMANCE.md §87 measured them against cuBLASLt).
constexpr std::int64_t kSmallGemmOutputs = 160 * 160;
constexpr std::int64_t kSmallGemmSum = 128;

__device__ inline float activate(GemmActivation activation, float x) {
  switch (activation) {
    case GemmActivation::relu: return x > 0.0f ? x : 0.0f;
    case GemmActivation::gelu_tanh: {
      const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.0f + tanhf(inner));
    }
    default: return x;
  }
}

// Where a thread's kLoads elements of an operand's stage lie: element i is (row r, term q) of rows [row0, row0 + kTile)
// and the stage's kDepth terms, at offset + p0 * down for the stage of first term p0, indexed along whichever of the
// two is contiguous so that a warp's loads fall on neighbouring addresses. Index is int where every offset of the
// product fits one (a plain product's): 64-bit arithmetic is a chained 64³ product's time too (PERFORMANCE.md §106).
template <bool kTermsContiguous, class Index>
struct StagePlan {
  Index offset[kLoads];
  int term[kLoads];
  bool row_inside[kLoads];

  static __device__ void place(int i, int& r, int& q) {
    const int l = static_cast<int>(threadIdx.x) + i * static_cast<int>(kThreads);
    r = kTermsContiguous ? l / kDepth : l % kTile;
    q = kTermsContiguous ? l % kDepth : l / kTile;
  }
  __device__ StagePlan(Index rows, Index row0, Index along, Index down) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      int r, q;
      place(i, r, q);
      row_inside[i] = row0 + r < rows;
      offset[i] = (row0 + r) * along + q * down;
      term[i] = q;
    }
  }
};

// One stage of an operand in flight: a thread's kLoads elements of it, zeros past the operand's edges.
template <bool kTermsContiguous, class Index>
struct Stage {
  float values[kLoads];

  __device__ void load(const StagePlan<kTermsContiguous, Index>& plan, const float* source, Index terms, Index p0,
                       Index down) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i)
      values[i] = plan.row_inside[i] && p0 + plan.term[i] < terms ? source[plan.offset[i] + p0 * down] : 0.0f;
  }
  __device__ void store(float (&tile)[kTile][kRowWords]) const {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      int r, q;
      StagePlan<kTermsContiguous, Index>::place(i, r, q);
      tile[r][q] = values[i];
    }
  }
};

// A lane's share of its output's sum over every stage of one member: lane (column c, part g) of warp w sums terms g,
// g + 4, ... of row w of op(A) and column c of op(B); the lanes sharing the output add their shares at the end. The
// tiles are stored again after the last stage (a next member) only if `again`.
template <bool kA, bool kB, class Index>
__device__ float tile_sum(const StagePlan<kA, Index>& a_plan, const float* a, Index a_down,
                          const StagePlan<kB, Index>& b_plan, const float* b, Index b_down, Index terms, bool again,
                          float (&a_tile)[kTile][kRowWords], float (&b_tile)[kTile][kRowWords]) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int row = static_cast<int>(threadIdx.x) / 32, column = lane % kTile, part = lane / kTile;
  float sum = 0;
  Stage<kA, Index> next_a;
  Stage<kB, Index> next_b;
  if (terms > 0) {
    next_a.load(a_plan, a, terms, 0, a_down);
    next_b.load(b_plan, b, terms, 0, b_down);
  }
  for (Index p0 = 0; p0 < terms; p0 += kDepth) {
    next_a.store(a_tile);
    next_b.store(b_tile);
    __syncthreads();
    const bool more_terms = p0 + kDepth < terms;
    if (more_terms) {
      next_a.load(a_plan, a, terms, p0 + kDepth, a_down);
      next_b.load(b_plan, b, terms, p0 + kDepth, b_down);
    }
    // Terms past k are staged as zeros, so every lane sums its 16 of the stage.
#pragma unroll
    for (int step = 0; step < kDepth / kSplit; ++step) {
      const int q = part + step * kSplit;
      sum = fma(a_tile[row][q], b_tile[column][q], sum);
    }
    if (more_terms || again) __syncthreads();  // every warp has read the tiles before they are stored again
  }
#pragma unroll
  for (int offset = kTile; offset < 32; offset *= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  return sum;
}

// Block (J, I, z): the tile of C at rows 8 I, columns 8 J of members z, z + gridDim.z, ...; warp w computes row w of
// it. Which operand's terms are contiguous is a template parameter, so that a stage's placement is arithmetic the
// compiler folds. A plain product (kPlain: one member, int offsets, C = alpha op(A) op(B)) leaves out the member
// loop, the 64-bit arithmetic and the epilogue's reads, each measured a tenth of a microsecond or more of a chained
// 64³ product (PERFORMANCE.md §106). Where each operand's elements lie is worked out before the kernel waits for the
// one before it (none of it reads memory), though on an H100 that measured the same as after.
template <bool kA, bool kB, bool kPlain>
__global__ void __launch_bounds__(kThreads) small_gemm_tiles(SmallGemmLaunch p) {
  using Index = std::conditional_t<kPlain, int, std::int64_t>;
  __shared__ float a_tile[kTile][kRowWords];
  __shared__ float b_tile[kTile][kRowWords];
  const Index row0 = static_cast<Index>(blockIdx.y) * kTile, col0 = static_cast<Index>(blockIdx.x) * kTile;
  const Index i = row0 + static_cast<Index>(threadIdx.x) / 32, j = col0 + static_cast<Index>(threadIdx.x) % kTile;
  const bool writes = static_cast<int>(threadIdx.x) % 32 < kTile && i < p.m && j < p.n;
  const float alpha = static_cast<float>(p.alpha);
  const Index terms = alpha != 0.0f ? static_cast<Index>(p.k) : 0;
  const Index a_down = static_cast<Index>(p.a_col), b_down = static_cast<Index>(p.b_row);
  const StagePlan<kA, Index> a_plan(static_cast<Index>(p.m), row0, static_cast<Index>(p.a_row), a_down);
  const StagePlan<kB, Index> b_plan(static_cast<Index>(p.n), col0, static_cast<Index>(p.b_col), b_down);
  const Index out_at = i * static_cast<Index>(p.c_row) + j * static_cast<Index>(p.c_col);
  wait_for_prior_kernel();
  if constexpr (kPlain) {
    const float sum = tile_sum(a_plan, static_cast<const float*>(p.a), a_down, b_plan, static_cast<const float*>(p.b),
                               b_down, terms, false, a_tile, b_tile);
    if (writes) static_cast<float*>(p.c)[out_at] = alpha * sum;
  } else {
    const float beta = static_cast<float>(p.beta);
    for (std::int64_t member = blockIdx.z; member < p.batch; member += gridDim.z) {
      const float sum = tile_sum(a_plan, static_cast<const float*>(p.a) + member * p.stride_a, a_down, b_plan,
                                 static_cast<const float*>(p.b) + member * p.stride_b, b_down, terms,
                                 member + gridDim.z < p.batch, a_tile, b_tile);
      if (!writes) continue;
      float& out = static_cast<float*>(p.c)[member * p.stride_c + out_at];
      float value = alpha * sum;
      if (beta != 0.0f) value += beta * out;
      if (p.bias != nullptr) value += static_cast<const float*>(p.bias)[i * p.bias_row + j * p.bias_col];
      out = activate(p.activation, value);
    }
  }
}

std::int64_t tiles_of(std::int64_t extent) { return (extent + kTile - 1) / kTile; }

template <bool kA, bool kB>
cudaError_t launch_tiles(const SmallGemmLaunch& launch, dim3 grid, cudaStream_t stream) {
  return plain_small_gemm(launch)
             ? launch_chained(small_gemm_tiles<kA, kB, true>, grid, dim3(kThreads), 0, stream, launch)
             : launch_chained(small_gemm_tiles<kA, kB, false>, grid, dim3(kThreads), 0, stream, launch);
}

}  // namespace

bool plain_small_gemm(const SmallGemmLaunch& launch) {
  constexpr std::int64_t kMostOffset = std::numeric_limits<int>::max();
  const std::int64_t rows = tiles_of(launch.m) * kTile, columns = tiles_of(launch.n) * kTile;
  const std::int64_t terms = (launch.k + kDepth - 1) / kDepth * kDepth + kDepth;
  // Division first: a stride the request's checks allow (any lda of a one-row operand) may overflow a product.
  auto fits = [](std::int64_t extent, std::int64_t along, std::int64_t other, std::int64_t down) {
    return along >= 0 && down >= 0 && along <= kMostOffset / extent && down <= kMostOffset / other &&
           extent * along <= kMostOffset - other * down;
  };
  return launch.batch == 1 && launch.beta == 0.0 && launch.bias == nullptr &&
         launch.activation == GemmActivation::identity && fits(rows, launch.a_row, terms, launch.a_col) &&
         fits(columns, launch.b_col, terms, launch.b_row) && fits(rows, launch.c_row, columns, launch.c_col);
}

bool small_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
  if (m <= 0 || n <= 0 || k < 0 || batch <= 0 || k > kSmallGemmSum) return false;
  return m <= kSmallGemmOutputs && n <= kSmallGemmOutputs && m * n <= kSmallGemmOutputs / batch;
}

cudaError_t launch_small_gemm(const SmallGemmLaunch& launch, cudaStream_t stream) {
  const std::int64_t across = tiles_of(launch.n), down = tiles_of(launch.m);
  if (down > kMaxGridExtent || launch.batch < 1) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(across), static_cast<unsigned>(down),
                  static_cast<unsigned>(std::min(launch.batch, kMaxGridExtent)));
  if (launch.a_col == 1)
    return launch.b_row == 1 ? launch_tiles<true, true>(launch, grid, stream)
                             : launch_tiles<true, false>(launch, grid, stream);
  return launch.b_row == 1 ? launch_tiles<false, true>(launch, grid, stream)
                           : launch_tiles<false, false>(launch, grid, stream);
}

}  // namespace accel::blas

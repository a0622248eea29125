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
#include "core/chained_launch.cuh"
#include "libs/blas/kernel_common.cuh"

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

// One stage of an operand in flight: the kLoads elements a thread loads of rows [row0, row0 + kTile) and terms
// [p0, p0 + kDepth) (element (r, p) at r * along + p * down), zeros past its edges, indexed along whichever of the
// two is contiguous so that a warp's loads fall on neighbouring addresses.
struct Stage {
  float values[kLoads];

  static __device__ void place(int i, bool terms_contiguous, int& r, int& p) {
    const int l = static_cast<int>(threadIdx.x) + i * static_cast<int>(kThreads);
    r = terms_contiguous ? l / kDepth : l % kTile;
    p = terms_contiguous ? l % kDepth : l / kTile;
  }
  __device__ void load(const float* source, std::int64_t rows, std::int64_t terms, std::int64_t row0, std::int64_t p0,
                       std::int64_t along, std::int64_t down) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      int r, p;
      place(i, down == 1, r, p);
      const std::int64_t row = row0 + r, term = p0 + p;
      values[i] = row < rows && term < terms ? source[row * along + term * down] : 0.0f;
    }
  }
  __device__ void store(float (&tile)[kTile][kRowWords], bool terms_contiguous) const {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      int r, p;
      place(i, terms_contiguous, r, p);
      tile[r][p] = values[i];
    }
  }
};

// Block (J, I, z): the tile of C at rows 8 I, columns 8 J of members z, z + gridDim.z, ...; warp w computes row w of
// it, lane (c + 8 g) column c's terms g, g + 4, ... of each stage.
__global__ void __launch_bounds__(kThreads) small_gemm_tiles(SmallGemmLaunch p) {
  wait_for_prior_kernel();
  __shared__ float a_tile[kTile][kRowWords];
  __shared__ float b_tile[kTile][kRowWords];
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int row = static_cast<int>(threadIdx.x) / 32, column = lane % kTile, part = lane / kTile;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const float alpha = static_cast<float>(p.alpha), beta = static_cast<float>(p.beta);
  const std::int64_t terms = alpha != 0.0f ? p.k : 0;
  for (std::int64_t member = blockIdx.z; member < p.batch; member += gridDim.z) {
    const float* a = static_cast<const float*>(p.a) + member * p.stride_a;
    const float* b = static_cast<const float*>(p.b) + member * p.stride_b;
    float sum = 0;
    Stage next_a, next_b;
    if (terms > 0) {
      next_a.load(a, p.m, terms, row0, 0, p.a_row, p.a_col);
      next_b.load(b, p.n, terms, col0, 0, p.b_col, p.b_row);
    }
    for (std::int64_t p0 = 0; p0 < terms; p0 += kDepth) {
      next_a.store(a_tile, p.a_col == 1);
      next_b.store(b_tile, p.b_row == 1);
      __syncthreads();
      if (p0 + kDepth < terms) {
        next_a.load(a, p.m, terms, row0, p0 + kDepth, p.a_row, p.a_col);
        next_b.load(b, p.n, terms, col0, p0 + kDepth, p.b_col, p.b_row);
      }
      // Terms past k are staged as zeros, so every lane sums its 16 of the stage.
#pragma unroll
      for (int step = 0; step < kDepth / kSplit; ++step) {
        const int q = part + step * kSplit;
        sum = fma(a_tile[row][q], b_tile[column][q], sum);
      }
      __syncthreads();
    }
#pragma unroll
    for (int offset = kTile; offset < 32; offset *= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    const std::int64_t i = row0 + row, j = col0 + column;
    if (part == 0 && i < p.m && j < p.n) {
      float& out = static_cast<float*>(p.c)[member * p.stride_c + i * p.c_row + j * p.c_col];
      float value = alpha * sum;
      if (beta != 0.0f) value += beta * out;
      if (p.bias != nullptr) value += static_cast<const float*>(p.bias)[i * p.bias_row + j * p.bias_col];
      out = activate(p.activation, value);
    }
  }
}

std::int64_t tiles_of(std::int64_t extent) { return (extent + kTile - 1) / kTile; }

}  // namespace

bool small_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
  if (m <= 0 || n <= 0 || k < 0 || batch <= 0 || k > kSmallGemmSum) return false;
  return m <= kSmallGemmOutputs && n <= kSmallGemmOutputs && m * n <= kSmallGemmOutputs / batch;
}

cudaError_t launch_small_gemm(const SmallGemmLaunch& launch, cudaStream_t stream) {
  const std::int64_t across = tiles_of(launch.n), down = tiles_of(launch.m);
  if (down > kMaxGridExtent || launch.batch < 1) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(across), static_cast<unsigned>(down),
                  static_cast<unsigned>(std::min(launch.batch, kMaxGridExtent)));
  return launch_chained(small_gemm_tiles, grid, dim3(kThreads), 0, stream, launch);
}

}  // namespace accel::blas

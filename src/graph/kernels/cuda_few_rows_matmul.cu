// A query's products: C [rows, n] = act(A [rows, k] Wᵀ + bias) (+ residual) for at most 64 rows, on tensor cores.
// At a query's size a product is not bound by arithmetic or bandwidth but by latency: cuBLASLt's kernels took 3.9-4.8
// µs each at 64 rows on the H200 (docs/PERFORMANCE.md §53, §65), and a kernel that reads its weights only after the
// one before it has ended waits a memory round trip for data that did not depend on it. So this kernel is launched
// chained and reads its slice of W and its bias (which nothing in a graph writes) before it waits for the kernel
// before; once its products are done it lets the next kernel be scheduled, so that a norm or product after it reads
// its own weights while this one sums and writes. Alone it is no faster than cuBLASLt's kernels; in a query's chain,
// with the norms' early reads, MiniLM's query ran 0.92-0.96x (§65). Its blocks each read every row of A, which costs
// little from L2 and too much beside weights read from DRAM at 32 rows or more: the graphs use it where their weights
// fit the L2, or at 16 rows for products of a few MB (cuda_steps.cpp's takes_few_rows, §81).
//
// A block takes 8 or 16 output columns; its warps split k into chunks of 32 and sum their partial tiles through shared
// memory, where the epilogue runs. Within a chunk each lane loads 16 contiguous bytes of a row (8 k values) of A and of
// W, and k is permuted inside the chunk to match: mma slots 2q, 2q+1 of the first step take k = 8q, 8q+1 and slots
// 2q+8, 2q+9 take 8q+2, 8q+3; the second step takes 8q+4 .. 8q+7. A and W see the same permutation, so the sum is
// unchanged, and every load is a full 16-byte vector with no shared-memory staging.
#include <algorithm>
#include <type_traits>

#include "core/chained_launch.cuh"
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_kernels.hpp"
#include "graph/kernels/cuda_mma.cuh"

namespace accel::graph::cuda {
namespace {

constexpr int kMaxWarps = 16;
constexpr int kChunk = 32;  // k values a warp takes per step: two m16n8k16 products

__device__ __forceinline__ uint4 load16(const void* p) { return __ldg(static_cast<const uint4*>(p)); }

// The 16-byte slices of A one lane takes for one k chunk: rows group and group + 8 of each 16-row tile.
struct RowSlices {
  uint4 low[4], high[4];
};

template <class T>
__device__ __forceinline__ void load_rows(const T* a, int rows, int k, int chunk, int group, int quad, RowSlices& x) {
  const std::int64_t offset = chunk * kChunk + 8 * quad;
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    const int low = m * 16 + group, high = low + 8;
    x.low[m] = low < rows ? load16(a + low * static_cast<std::int64_t>(k) + offset) : make_uint4(0, 0, 0, 0);
    x.high[m] = high < rows ? load16(a + high * static_cast<std::int64_t>(k) + offset) : make_uint4(0, 0, 0, 0);
  }
}

// kColTiles: 8-column tiles a block takes; kChunks: the most k chunks one warp takes (ceil(k / 32 / warps)).
// kGated: the product's columns are gates and ups in groups of 8 (GateLayout::groups_of_8), a block's two tiles one
// group, and C [rows, n / 2] takes act(gate) * up (the gated op after the product), each rounded to T first as the
// product's output would have been.
template <class T, int kColTiles, int kChunks, bool kGated>
__global__ void __launch_bounds__(kMaxWarps * 32)
    few_rows_matmul_kernel(const T* a, const T* w, const T* bias, Activation activation, const T* residual, int rows,
                           int n, int k, T* c) {
  static_assert(!kGated || kColTiles == 2);
  constexpr int kWidth = kColTiles * 8;
  extern __shared__ float partial[];  // [warps][row tiles * 16][kWidth]
  __shared__ float bias_tile[kWidth];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
  const int warps = static_cast<int>(blockDim.x / 32), chunks = k / kChunk;
  const int col0 = static_cast<int>(blockIdx.x) * kWidth;
  // What no kernel of the graph writes (W, the bias) is read before waiting for the kernel before.
  uint4 weight[kChunks][kColTiles];
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    const int chunk = warp + i * warps;
#pragma unroll
    for (int t = 0; t < kColTiles; ++t) {
      const int col = col0 + t * 8 + group;
      weight[i][t] = chunk < chunks && col < n
                         ? load16(w + static_cast<std::int64_t>(col) * k + chunk * kChunk + 8 * quad)
                         : make_uint4(0, 0, 0, 0);
    }
  }
  if (threadIdx.x < kWidth)
    bias_tile[threadIdx.x] = bias != nullptr && col0 + threadIdx.x < n ? detail::to_float(bias[col0 + threadIdx.x]) : 0;
  wait_for_prior_kernel();

  // Each chunk's rows are loaded before the chunk before is multiplied, so a warp waits for A once, not per chunk.
  const int row_tiles = (rows + 15) / 16;
  float acc[4][kColTiles][4] = {};
  RowSlices x[2];
  if (warp < chunks) load_rows(a, rows, k, warp, group, quad, x[0]);
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    if (warp + i * warps >= chunks) break;
    if (i + 1 < kChunks && warp + (i + 1) * warps < chunks)
      load_rows(a, rows, k, warp + (i + 1) * warps, group, quad, x[(i + 1) % 2]);
    const RowSlices& now = x[i % 2];
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      if (m >= row_tiles) break;
      const std::uint32_t first[4] = {now.low[m].x, now.high[m].x, now.low[m].y, now.high[m].y};
      const std::uint32_t second[4] = {now.low[m].z, now.high[m].z, now.low[m].w, now.high[m].w};
#pragma unroll
      for (int t = 0; t < kColTiles; ++t) {
        detail::mma<T>(acc[m][t], first, weight[i][t].x, weight[i][t].y);
        detail::mma<T>(acc[m][t], second, weight[i][t].z, weight[i][t].w);
      }
    }
  }
  // The next kernel may read its own weights while this one sums and writes.
  let_next_kernel_start();

  const int tile_rows = row_tiles * 16;
  float* mine = partial + warp * tile_rows * kWidth;
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    if (m >= row_tiles) break;
#pragma unroll
    for (int t = 0; t < kColTiles; ++t) {
      float* low = mine + (m * 16 + group) * kWidth + t * 8 + 2 * quad;
      low[0] = acc[m][t][0];
      low[1] = acc[m][t][1];
      low[8 * kWidth] = acc[m][t][2];
      low[8 * kWidth + 1] = acc[m][t][3];
    }
  }
  __syncthreads();
  // Column `at` of a row's tile summed over the warps' partials with its bias; unrolled so that a thread's reads of the
  // partials are in flight together.
  const auto summed = [&](int at) {
    float sum = bias_tile[at % kWidth];
#pragma unroll
    for (int v = 0; v < kMaxWarps; ++v)
      if (v < warps) sum += partial[v * tile_rows * kWidth + at];
    return sum;
  };
  if constexpr (kGated) {
    const int width = n / 2;
    for (int e = static_cast<int>(threadIdx.x); e < tile_rows * 8; e += static_cast<int>(blockDim.x)) {
      const int row = e / 8, j = e % 8, col = static_cast<int>(blockIdx.x) * 8 + j;
      if (row >= rows || col >= width) continue;
      const float gate = detail::to_float(detail::from_float<T>(summed(row * kWidth + j)));
      const float up = detail::to_float(detail::from_float<T>(summed(row * kWidth + 8 + j)));
      c[static_cast<std::int64_t>(row) * width + col] = detail::from_float<T>(detail::activate(activation, gate) * up);
    }
  } else {
    for (int e = static_cast<int>(threadIdx.x); e < tile_rows * kWidth; e += static_cast<int>(blockDim.x)) {
      const int row = e / kWidth, col = col0 + e % kWidth;
      if (row >= rows || col >= n) continue;
      float sum = detail::activate(activation, summed(e));
      const std::int64_t at = static_cast<std::int64_t>(row) * n + col;
      if (residual != nullptr) sum += detail::to_float(residual[at]);
      c[at] = detail::from_float<T>(sum);
    }
  }
}

template <class T, int kColTiles, int kChunks, bool kGated = false>
cudaError_t launch(const void* a, const void* w, const void* bias, Activation activation, const void* residual,
                   int rows, int n, int k, void* c, cudaStream_t stream) {
  const int warps = std::min(kMaxWarps, k / kChunk);
  const std::size_t shared = sizeof(float) * warps * ((rows + 15) / 16 * 16) * kColTiles * 8;
  constexpr auto kernel = few_rows_matmul_kernel<T, kColTiles, kChunks, kGated>;
  if (const cudaError_t error = allow_shared<kernel>(shared); error != cudaSuccess) return error;
  const unsigned blocks = static_cast<unsigned>((n + kColTiles * 8 - 1) / (kColTiles * 8));
  return launch_chained(kernel, dim3(blocks), dim3(warps * 32), shared, stream, static_cast<const T*>(a),
                        static_cast<const T*>(w), static_cast<const T*>(bias), activation,
                        static_cast<const T*>(residual), rows, n, k, static_cast<T*>(c));
}

// `launch_as(tag)` with a value of the storage type for f16 and bf16; few_rows_matmul_fits refuses f32 before.
template <class LaunchAs>
cudaError_t dispatch_half(DType dtype, LaunchAs launch_as) {
  return detail::dispatch(dtype, [&](auto tag) -> cudaError_t {
    if constexpr (std::is_same_v<decltype(tag), float>) {
      return cudaErrorInvalidValue;
    } else {
      return launch_as(tag);
    }
  });
}

}  // namespace

bool few_rows_matmul_fits(DType dtype, std::int64_t rows, std::int64_t n, std::int64_t k, const void* a,
                          const void* w) {
  return (dtype == DType::f16 || dtype == DType::bf16) && rows >= 1 && rows <= kFewRows && n >= 1 &&
         n <= (std::int64_t{1} << 30) && k >= kChunk && k <= kMaxWarps * kChunk * 8 && k % kChunk == 0 &&
         detail::aligned16(a) && detail::aligned16(w);
}

cudaError_t few_rows_matmul(DType dtype, const void* a, const void* w, const void* bias, Activation activation,
                            const void* residual, std::int64_t rows, std::int64_t n, std::int64_t k, void* c,
                            cudaStream_t stream) {
  if (!few_rows_matmul_fits(dtype, rows, n, k, a, w)) return cudaErrorInvalidValue;
  const int chunks_per_warp = static_cast<int>((k / kChunk + kMaxWarps - 1) / kMaxWarps);
  // 16 columns a block where that still leaves a block for most multiprocessors and the registers allow it (with 4
  // chunks a warp, 16 columns spilled).
  const bool wide = n / 16 >= 96 && chunks_per_warp <= 2;
  const int r = static_cast<int>(rows), columns = static_cast<int>(n), depth = static_cast<int>(k);
  return dispatch_half(dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto go = [&](auto col_tiles, auto chunks) {
      return launch<T, decltype(col_tiles)::value, decltype(chunks)::value>(a, w, bias, activation, residual, r,
                                                                            columns, depth, c, stream);
    };
    using One = std::integral_constant<int, 1>;
    using Two = std::integral_constant<int, 2>;
    using Four = std::integral_constant<int, 4>;
    using Eight = std::integral_constant<int, 8>;
    if (chunks_per_warp == 1) return wide ? go(Two{}, One{}) : go(One{}, One{});
    if (chunks_per_warp == 2) return wide ? go(Two{}, Two{}) : go(One{}, Two{});
    if (chunks_per_warp <= 4) return go(One{}, Four{});
    return go(One{}, Eight{});
  });
}

bool few_rows_gated_matmul_fits(DType dtype, std::int64_t rows, std::int64_t n, std::int64_t k, const void* a,
                                const void* w) {
  // Two chunks a warp at most: the block's two tiles with more spilled (see few_rows_matmul).
  return few_rows_matmul_fits(dtype, rows, n, k, a, w) && n % 16 == 0 && k <= kMaxWarps * kChunk * 2;
}

cudaError_t few_rows_gated_matmul(DType dtype, const void* a, const void* w, const void* bias, Activation activation,
                                  std::int64_t rows, std::int64_t n, std::int64_t k, void* y, cudaStream_t stream) {
  if (!few_rows_gated_matmul_fits(dtype, rows, n, k, a, w)) return cudaErrorInvalidValue;
  const bool one_chunk = k <= kMaxWarps * kChunk;
  const int r = static_cast<int>(rows), columns = static_cast<int>(n), depth = static_cast<int>(k);
  return dispatch_half(dtype, [&](auto tag) {
    using T = decltype(tag);
    return one_chunk ? launch<T, 2, 1, true>(a, w, bias, activation, nullptr, r, columns, depth, y, stream)
                     : launch<T, 2, 2, true>(a, w, bias, activation, nullptr, r, columns, depth, y, stream);
  });
}

}  // namespace accel::graph::cuda

// The compiled graphs' own matmul: a shared-memory tiled kernel with float accumulation and the bias and activation
// in its epilogue. It runs a process's first graphs while cuBLASLt pays its one-time start-up on another thread
// (libs/blas/cublaslt_startup.hpp), so it is built to be correct on every shape and to load fast, not for peak
// throughput: plain FMAs, no tensor cores.
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::graph::cuda {
namespace {

constexpr int kTileRows = 64, kTileCols = 64, kTileDepth = 16;
constexpr int kThreads = 256;  // 16 x 16, each thread 4 x 4 outputs
constexpr int kPerThread = 4;

template <class T>
__global__ void __launch_bounds__(kThreads)
    matmul_kernel(const T* a, const T* b, bool transpose_b, const T* bias, Activation activation, std::int64_t rows,
                  std::int64_t n, std::int64_t k, T* c) {
  // Both tiles depth-major, so that the inner loop reads a thread's rows and columns as consecutive floats; the
  // padding keeps the transposing stores off one bank.
  __shared__ float a_tile[kTileDepth][kTileRows + 4];
  __shared__ float b_tile[kTileDepth][kTileCols + 4];
  const int col_group = threadIdx.x % 16, row_group = threadIdx.x / 16;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.y) * kTileRows;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x) * kTileCols;
  float acc[kPerThread][kPerThread] = {};
  for (std::int64_t depth0 = 0; depth0 < k; depth0 += kTileDepth) {
    for (int i = threadIdx.x; i < kTileRows * kTileDepth; i += kThreads) {
      const int r = i / kTileDepth, d = i % kTileDepth;  // neighbours read along a row of A
      const std::int64_t row = row0 + r, depth = depth0 + d;
      a_tile[d][r] = row < rows && depth < k ? detail::to_float(a[row * k + depth]) : 0.0f;
    }
    for (int i = threadIdx.x; i < kTileCols * kTileDepth; i += kThreads) {
      // Neighbours read along B's stored rows: depth for Bᵀ ([n, k]), columns otherwise ([k, n]).
      const int col = transpose_b ? i / kTileDepth : i % kTileCols;
      const int d = transpose_b ? i % kTileDepth : i / kTileCols;
      const std::int64_t column = col0 + col, depth = depth0 + d;
      float v = 0.0f;
      if (column < n && depth < k) v = detail::to_float(transpose_b ? b[column * k + depth] : b[depth * n + column]);
      b_tile[d][col] = v;
    }
    __syncthreads();
#pragma unroll
    for (int d = 0; d < kTileDepth; ++d) {
      float av[kPerThread], bv[kPerThread];
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        av[i] = a_tile[d][row_group * kPerThread + i];
        bv[i] = b_tile[d][col_group * kPerThread + i];
      }
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const std::int64_t row = row0 + row_group * kPerThread + i;
    if (row >= rows) break;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const std::int64_t column = col0 + col_group * kPerThread + j;
      if (column >= n) break;
      const float shift = bias != nullptr ? detail::to_float(bias[column]) : 0.0f;
      c[row * n + column] = detail::from_float<T>(detail::activate(activation, acc[i][j] + shift));
    }
  }
}

}  // namespace

cudaError_t matmul(DType dtype, const void* a, const void* b, bool transpose_b, const void* bias, Activation activation,
                   std::int64_t rows, std::int64_t n, std::int64_t k, void* c, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return cudaSuccess;
  const std::int64_t grid_rows = (rows + kTileRows - 1) / kTileRows, grid_cols = (n + kTileCols - 1) / kTileCols;
  if (grid_rows > 65535 || grid_cols > 0x7fffffff || k < 0) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(grid_cols), static_cast<unsigned>(grid_rows));
  return detail::dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    matmul_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b), transpose_b,
                                                    static_cast<const T*>(bias), activation, rows, n, k,
                                                    static_cast<T*>(c));
    return cudaGetLastError();
  });
}

}  // namespace accel::graph::cuda

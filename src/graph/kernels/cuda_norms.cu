// The row-wise graph kernels on CUDA: LayerNorm and RMSNorm (with the residual add), the fused embedding + LayerNorm,
// L2 normalisation and pooling. One warp per row; the passes over a row re-read it, which the L1 cache serves
// (a BERT row is 384 elements), rather than holding it in registers sized for the widest row.
#include "core/chained_launch.cuh"
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::graph::cuda {
namespace {

using detail::dispatch;
using detail::vectorizable;

constexpr int kWarps = 4;

// The statistics of one row and its normalised write, given `source(c, v)` that fills the V elements of the
// row's pre-norm values h at column c. `sum` (may be null) receives h.
template <int V, class T, class Source>
__device__ void normalize_row(Source source, const T* gamma, const T* beta, std::int64_t width, float eps, bool rms,
                              T* y, T* sum) {
  const int lane = threadIdx.x % 32;
  float v[V];
  float total = 0;
  for (std::int64_t c = lane * V; c < width; c += 32 * V) {
    source(c, v);
#pragma unroll
    for (int e = 0; e < V; ++e) total += rms ? v[e] * v[e] : v[e];
  }
  total = detail::warp_sum(total) / static_cast<float>(width);
  float mean = 0, inverse;
  if (rms) {
    inverse = rsqrtf(total + eps);
  } else {
    mean = total;
    float squares = 0;
    for (std::int64_t c = lane * V; c < width; c += 32 * V) {
      source(c, v);
#pragma unroll
      for (int e = 0; e < V; ++e) squares += (v[e] - mean) * (v[e] - mean);
    }
    inverse = rsqrtf(detail::warp_sum(squares) / static_cast<float>(width) + eps);
  }
  for (std::int64_t c = lane * V; c < width; c += 32 * V) {
    source(c, v);
    if (sum) detail::store<V>(sum + c, v);
    float g[V], b[V];
    detail::load<V>(gamma + c, g);
    if (beta)
      detail::load<V>(beta + c, b);
    else
      detail::fill(b, 0.0f);
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = (v[e] - mean) * inverse * g[e] + b[e];
    detail::store<V>(y + c, v);
  }
}

template <int V, class T>
__global__ void norm_kernel(const T* x, const T* residual, const T* gamma, const T* beta, std::int64_t rows,
                            std::int64_t width, float eps, bool rms, T* y, T* sum) {
  wait_for_prior_kernel();
  const std::int64_t row = blockIdx.x * std::int64_t{kWarps} + threadIdx.x / 32;
  if (row >= rows) return;
  const std::int64_t base = row * width;
  const auto source = [&](std::int64_t c, float(&v)[V]) {
    detail::load<V>(x + base + c, v);
    if (residual) {
      float r[V];
      detail::load<V>(residual + base + c, r);
#pragma unroll
      for (int e = 0; e < V; ++e) v[e] += r[e];
    }
  };
  normalize_row<V>(source, gamma, beta, width, eps, rms, y + base, sum ? sum + base : nullptr);
}

// norm_kernel for rows of at most N * 32 * V elements (BERT's 384 and 768, 1,024): the row is read once into
// registers, where norm_kernel reads it three times through L1 (the statistics' two passes, then the write).
// kEarlyWeights: gamma and beta, which no kernel of a graph writes, are read before waiting for the kernel before:
// for kFewRows rows at most, where with the few-rows matmul it took a query of MiniLM's shape 207 -> 190 µs on the
// H200; for a batch's thousands of rows it cost tokens ready 1.5-2.5 % (PERFORMANCE §65), each row's warp holding both
// in registers through its statistics.
template <int V, int N, bool kEarlyWeights, class T>
__global__ void resident_norm_kernel(const T* x, const T* residual, const T* gamma, const T* beta, std::int64_t rows,
                                     std::int64_t width, float eps, bool rms, T* y, T* sum) {
  const int lane = threadIdx.x % 32;
  float early_gamma[N][V], early_beta[N][V];
  const auto load_weights = [&](std::int64_t c, float(&g)[V], float(&b)[V]) {
    detail::load<V>(gamma + c, g);
    if (beta)
      detail::load<V>(beta + c, b);
    else
      detail::fill(b, 0.0f);
  };
  if constexpr (kEarlyWeights) {
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const std::int64_t c = (std::int64_t{j} * 32 + lane) * V;
      if (c < width) load_weights(c, early_gamma[j], early_beta[j]);
    }
  }
  wait_for_prior_kernel();
  const std::int64_t row = blockIdx.x * std::int64_t{kWarps} + threadIdx.x / 32;
  if (row >= rows) return;
  const std::int64_t base = row * width;
  float v[N][V];
  float total = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const std::int64_t c = (std::int64_t{j} * 32 + lane) * V;
    detail::fill(v[j], 0.0f);
    if (c >= width) continue;
    detail::load<V>(x + base + c, v[j]);
    if (residual) {
      float r[V];
      detail::load<V>(residual + base + c, r);
#pragma unroll
      for (int e = 0; e < V; ++e) v[j][e] += r[e];
    }
#pragma unroll
    for (int e = 0; e < V; ++e) total += rms ? v[j][e] * v[j][e] : v[j][e];
  }
  total = detail::warp_sum(total) / static_cast<float>(width);
  float mean = 0, inverse;
  if (rms) {
    inverse = rsqrtf(total + eps);
  } else {
    mean = total;
    float squares = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      if ((std::int64_t{j} * 32 + lane) * V >= width) continue;
#pragma unroll
      for (int e = 0; e < V; ++e) squares += (v[j][e] - mean) * (v[j][e] - mean);
    }
    inverse = rsqrtf(detail::warp_sum(squares) / static_cast<float>(width) + eps);
  }
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const std::int64_t c = (std::int64_t{j} * 32 + lane) * V;
    if (c >= width) continue;
    if (sum) detail::store<V>(sum + base + c, v[j]);
    float g[V], b[V];
    if constexpr (kEarlyWeights) {
#pragma unroll
      for (int e = 0; e < V; ++e) g[e] = early_gamma[j][e], b[e] = early_beta[j][e];
    } else {
      load_weights(c, g, b);
    }
#pragma unroll
    for (int e = 0; e < V; ++e) v[j][e] = (v[j][e] - mean) * inverse * g[e] + b[e];
    detail::store<V>(y + base + c, v[j]);
  }
}

// The kernel for `rows` rows of `width` elements: held in registers up to 1,024 elements on the vector path.
template <class T, bool kEarlyWeights, class Launch>
cudaError_t launch_resident_norm(std::int64_t width, Launch launch) {
  if (width <= 256) return launch(resident_norm_kernel<8, 1, kEarlyWeights, T>);
  if (width <= 512) return launch(resident_norm_kernel<8, 2, kEarlyWeights, T>);
  if (width <= 768) return launch(resident_norm_kernel<8, 3, kEarlyWeights, T>);
  return launch(resident_norm_kernel<8, 4, kEarlyWeights, T>);
}
template <class T, class Launch>
cudaError_t launch_norm(std::int64_t rows, std::int64_t width, bool vector, bool constant_weights, Launch launch) {
  if (!vector) return launch(norm_kernel<1, T>);
  if (width > 1024) return launch(norm_kernel<8, T>);
  if (constant_weights && rows <= kFewRows) return launch_resident_norm<T, true>(width, launch);
  return launch_resident_norm<T, false>(width, launch);
}

template <int V, class T>
__global__ void embedding_kernel(const T* word_table, std::int64_t word_rows, const T* position_table,
                                 std::int64_t position_rows, const T* type_row, const std::int32_t* ids,
                                 const std::int32_t* offsets, std::int64_t sequences, std::int64_t rows,
                                 std::int64_t width, const T* gamma, const T* beta, float eps, T* y) {
  wait_for_prior_kernel();
  const std::int64_t row = blockIdx.x * std::int64_t{kWarps} + threadIdx.x / 32;
  if (row >= rows) return;
  const std::int64_t s = detail::sequence_of(offsets, sequences, row);
  T* out = y + row * width;
  if (s < 0) {
    float zeros[V];
    detail::fill(zeros, 0.0f);
    for (std::int64_t c = threadIdx.x % 32 * V; c < width; c += 32 * V) detail::store<V>(out + c, zeros);
    return;
  }
  const std::int64_t id = ids[row];
  const std::int64_t position = row - offsets[s];
  const T* word = id >= 0 && id < word_rows ? word_table + id * width : nullptr;
  const T* place = position < position_rows ? position_table + position * width : nullptr;
  const auto source = [&](std::int64_t c, float(&v)[V]) {
    float add[V];
    detail::fill(v, 0.0f);
    const T* parts[] = {word, place, type_row};
    for (const T* part : parts) {
      if (!part) continue;
      detail::load<V>(part + c, add);
#pragma unroll
      for (int e = 0; e < V; ++e) v[e] += add[e];
    }
  };
  normalize_row<V>(source, gamma, beta, width, eps, false, out, static_cast<T*>(nullptr));
}

template <int V, class T>
__global__ void l2_kernel(const T* x, std::int64_t rows, std::int64_t width, float eps, T* y) {
  wait_for_prior_kernel();
  const std::int64_t row = blockIdx.x * std::int64_t{kWarps} + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  float v[V];
  float squares = 0;
  for (std::int64_t c = lane * V; c < width; c += 32 * V) {
    detail::load<V>(x + row * width + c, v);
#pragma unroll
    for (int e = 0; e < V; ++e) squares += v[e] * v[e];
  }
  const float inverse = 1.0f / fmaxf(sqrtf(detail::warp_sum(squares)), eps);
  for (std::int64_t c = lane * V; c < width; c += 32 * V) {
    detail::load<V>(x + row * width + c, v);
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] *= inverse;
    detail::store<V>(y + row * width + c, v);
  }
}

// Pooling: a block per sequence (blockIdx.x) and kPoolColumns chunks of V columns (blockIdx.y). Its kPoolLanes
// rows of threads take every kPoolLanes-th row of the sequence, so a long sequence's rows are read by eight loads in
// flight rather than one after another (one thread per column walked a 256-token sequence's rows in series: ~30 µs
// a batch); lane 0 then combines the lanes' partial results through shared memory. A warp's loads of a row are
// contiguous. The mode is uniform across the grid, so its branches never diverge. weighted_mean's weights 1..n sum
// to n (n + 1) / 2.
constexpr int kPoolColumns = 32;
constexpr int kPoolLanes = 8;

template <int V, class T>
__global__ void __launch_bounds__(kPoolColumns* kPoolLanes)
    pool_kernel(PoolMode mode, const T* x, std::int64_t width, const std::int32_t* offsets, std::int64_t rows, T* out) {
  __shared__ float partial[kPoolLanes - 1][kPoolColumns][V];
  wait_for_prior_kernel();
  const std::int64_t c = (blockIdx.y * std::int64_t{kPoolColumns} + threadIdx.x) * V;
  const bool active = c < width;  // inactive threads still reach the barrier
  const int lane = static_cast<int>(threadIdx.y);
  const std::int64_t s = blockIdx.x;
  const auto [begin, length] = detail::sequence_span(offsets, s, rows, rows);
  const bool max = mode == PoolMode::max;
  float total[V], v[V];
  detail::fill(total, max ? -INFINITY : 0.0f);
  if (active && length > 0 && (mode == PoolMode::first || mode == PoolMode::last)) {
    if (lane == 0) detail::load<V>(x + (mode == PoolMode::first ? begin : begin + length - 1) * width + c, total);
  } else if (active) {
#pragma unroll 2
    for (std::int64_t i = lane; i < length; i += kPoolLanes) {
      detail::load<V>(x + (begin + i) * width + c, v);
      const float weight = mode == PoolMode::weighted_mean ? static_cast<float>(i + 1) : 1.0f;
#pragma unroll
      for (int e = 0; e < V; ++e) total[e] = max ? fmaxf(total[e], v[e]) : total[e] + weight * v[e];
    }
  }
  if (lane > 0) {
#pragma unroll
    for (int e = 0; e < V; ++e) partial[lane - 1][threadIdx.x][e] = total[e];
  }
  __syncthreads();
  if (lane > 0 || !active) return;
  const bool pooled_rows = mode != PoolMode::first && mode != PoolMode::last;
  for (int other = 0; pooled_rows && other < kPoolLanes - 1; ++other) {
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const float theirs = partial[other][threadIdx.x][e];
      total[e] = max ? fmaxf(total[e], theirs) : total[e] + theirs;
    }
  }
  const auto n = static_cast<float>(length);
  const float scale = mode == PoolMode::mean               ? 1.0f / n
                      : mode == PoolMode::mean_sqrt_length ? 1.0f / sqrtf(n)
                      : mode == PoolMode::weighted_mean    ? 2.0f / (n * (n + 1.0f))
                                                           : 1.0f;
#pragma unroll
  for (int e = 0; e < V; ++e) total[e] = length == 0 ? 0.0f : total[e] * scale;  // max's -inf: no rows, zeros
  detail::store<V>(out + s * width + c, total);
}

unsigned row_blocks(std::int64_t rows) { return static_cast<unsigned>((rows + kWarps - 1) / kWarps); }

bool fits_grid(std::int64_t rows) { return row_blocks(rows) <= 0x7fffffffu; }

}  // namespace

cudaError_t layer_norm(DType dtype, const void* x, const void* residual, const void* gamma, const void* beta,
                       std::int64_t rows, std::int64_t width, float eps, void* y, void* sum, cudaStream_t stream,
                       bool constant_weights) {
  if (rows == 0 || width == 0) return cudaSuccess;
  if (!fits_grid(rows)) return cudaErrorInvalidValue;
  return dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto args = [&](auto kernel) {
      return launch_chained(kernel, row_blocks(rows), kWarps * 32, 0, stream, static_cast<const T*>(x),
                            static_cast<const T*>(residual), static_cast<const T*>(gamma), static_cast<const T*>(beta),
                            rows, width, eps, false, static_cast<T*>(y), static_cast<T*>(sum));
    };
    return launch_norm<T>(rows, width, vectorizable(width, x, residual, gamma, beta, y, sum), constant_weights, args);
  });
}

cudaError_t rms_norm(DType dtype, const void* x, const void* residual, const void* gamma, std::int64_t rows,
                     std::int64_t width, float eps, void* y, void* sum, cudaStream_t stream, bool constant_weights) {
  if (rows == 0 || width == 0) return cudaSuccess;
  if (!fits_grid(rows)) return cudaErrorInvalidValue;
  return dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto args = [&](auto kernel) {
      return launch_chained(kernel, row_blocks(rows), kWarps * 32, 0, stream, static_cast<const T*>(x),
                            static_cast<const T*>(residual), static_cast<const T*>(gamma), nullptr, rows, width, eps,
                            true, static_cast<T*>(y), static_cast<T*>(sum));
    };
    return launch_norm<T>(rows, width, vectorizable(width, x, residual, gamma, y, sum), constant_weights, args);
  });
}

cudaError_t embedding_layer_norm(DType dtype, const void* word_table, std::int64_t word_rows,
                                 const void* position_table, std::int64_t position_rows, const void* type_row,
                                 const std::int32_t* ids, const std::int32_t* offsets, std::int64_t sequences,
                                 std::int64_t rows, std::int64_t width, const void* gamma, const void* beta, float eps,
                                 void* y, cudaStream_t stream) {
  if (rows == 0 || width == 0) return cudaSuccess;
  if (!fits_grid(rows)) return cudaErrorInvalidValue;
  return dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto args = [&](auto kernel) {
      return launch_chained(kernel, row_blocks(rows), kWarps * 32, 0, stream, static_cast<const T*>(word_table),
                            word_rows, static_cast<const T*>(position_table), position_rows,
                            static_cast<const T*>(type_row), ids, offsets, sequences, rows, width,
                            static_cast<const T*>(gamma), static_cast<const T*>(beta), eps, static_cast<T*>(y));
    };
    if (vectorizable(width, word_table, position_table, type_row, gamma, beta, y)) return args(embedding_kernel<8, T>);
    return args(embedding_kernel<1, T>);
  });
}

cudaError_t l2_normalize(DType dtype, const void* x, std::int64_t rows, std::int64_t width, float eps, void* y,
                         cudaStream_t stream) {
  if (rows == 0 || width == 0) return cudaSuccess;
  if (!fits_grid(rows)) return cudaErrorInvalidValue;
  return dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto* xt = static_cast<const T*>(x);
    auto* yt = static_cast<T*>(y);
    const auto kernel = vectorizable(width, x, y) ? l2_kernel<8, T> : l2_kernel<1, T>;
    return launch_chained(kernel, row_blocks(rows), kWarps * 32, 0, stream, xt, rows, width, eps, yt);
  });
}

cudaError_t pool(PoolMode mode, DType dtype, const void* x, std::int64_t width, const std::int32_t* offsets,
                 std::int64_t sequences, std::int64_t rows, void* out, cudaStream_t stream) {
  if (sequences == 0 || width == 0) return cudaSuccess;
  const bool vector = vectorizable(width, x, out);
  const std::int64_t chunks = vector ? width / 8 : width;
  const std::int64_t column_blocks = (chunks + kPoolColumns - 1) / kPoolColumns;
  if (sequences > 0x7fffffff || column_blocks > 65535) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(sequences), static_cast<unsigned>(column_blocks));
  const dim3 block(kPoolColumns, kPoolLanes);
  return dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto* xt = static_cast<const T*>(x);
    auto* ot = static_cast<T*>(out);
    const auto kernel = vector ? pool_kernel<8, T> : pool_kernel<1, T>;
    return launch_chained(kernel, grid, block, 0, stream, mode, xt, width, offsets, rows, ot);
  });
}

}  // namespace accel::graph::cuda

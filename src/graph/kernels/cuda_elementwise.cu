// The element-wise and copying graph kernels on CUDA: gather, positions, activations, binary ops, casts and
// strided copies. Each thread takes V consecutive elements of a row (V = 8 on the vector path).
#include <limits>

#include "core/chained_launch.cuh"
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::graph::cuda {
namespace {

using detail::dispatch;
using detail::vectorizable;

constexpr int kThreads = 256;

template <int V, class T>
__global__ void gather_kernel(const T* table, std::int64_t table_rows, std::int64_t width, const std::int32_t* indices,
                              std::int64_t rows, T* out) {
  const std::int64_t chunks = width / V;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < rows * chunks;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = i / chunks, c = i % chunks * V;
    const std::int32_t index = indices[r];
    float v[V];
    if (index >= 0 && index < table_rows)
      detail::load<V>(table + index * width + c, v);
    else
      detail::fill(v, 0.0f);
    detail::store<V>(out + r * width + c, v);
  }
}

__global__ void positions_kernel(const std::int32_t* offsets, std::int64_t sequences, std::int64_t rows,
                                 std::int32_t* positions) {
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; r < rows;
       r += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t s = detail::sequence_of(offsets, sequences, r);
    positions[r] = s < 0 ? 0 : static_cast<std::int32_t>(r - offsets[s]);
  }
}

template <int V, class T>
__global__ void bias_activation_kernel(const T* x, const T* bias, std::int64_t rows, std::int64_t width,
                                       Activation activation, T* y) {
  wait_for_prior_kernel();
  const std::int64_t chunks = width / V;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < rows * chunks;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = i / chunks, c = i % chunks * V;
    float v[V], b[V];
    detail::load<V>(x + r * width + c, v);
    if (bias)
      detail::load<V>(bias + c, b);
    else
      detail::fill(b, 0.0f);
#pragma unroll
    for (int e = 0; e < V; ++e) v[e] = detail::activate(activation, v[e] + b[e]);
    detail::store<V>(y + r * width + c, v);
  }
}

template <int V, class T>
__global__ void binary_kernel(BinaryOp op, const T* a, const T* b, Broadcast b_shape, std::int64_t rows,
                              std::int64_t width, T* out, Activation a_activation) {
  wait_for_prior_kernel();
  const std::int64_t chunks = width / V;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < rows * chunks;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = i / chunks, c = i % chunks * V;
    float u[V], w[V];
    detail::load<V>(a + r * width + c, u);
    detail::load<V>(b + (b_shape == Broadcast::row ? 0 : r * width) + c, w);
    if (a_activation != Activation::identity) {
#pragma unroll
      for (int e = 0; e < V; ++e) u[e] = detail::activate(a_activation, u[e]);
    }
#pragma unroll
    for (int e = 0; e < V; ++e) {
      switch (op) {
        case BinaryOp::add: u[e] += w[e]; break;
        case BinaryOp::sub: u[e] -= w[e]; break;
        case BinaryOp::mul: u[e] *= w[e]; break;
        case BinaryOp::div: u[e] /= w[e]; break;
      }
    }
    detail::store<V>(out + r * width + c, u);
  }
}

// Index: the type of the element arithmetic, 32-bit where rows * width allows (a 64-bit division per chunk is
// dozens of instructions).
template <int V, class Index, class T>
__global__ void gated_kernel(const T* x, Index rows, Index width, Activation activation, T* y) {
  wait_for_prior_kernel();
  const Index chunks = width / V;
  const auto stride = static_cast<Index>(gridDim.x) * static_cast<Index>(blockDim.x);
  for (Index i = static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) + static_cast<Index>(threadIdx.x);
       i < rows * chunks; i += stride) {
    const Index r = i / chunks, c = i % chunks * V;
    float u[V], w[V];
    detail::load<V>(x + r * 2 * width + c, u);
    detail::load<V>(x + r * 2 * width + width + c, w);
#pragma unroll
    for (int e = 0; e < V; ++e) u[e] = detail::activate(activation, u[e]) * w[e];
    detail::store<V>(y + r * width + c, u);
  }
}

template <int V, class From, class To>
__global__ void cast_kernel(const From* x, To* y, std::int64_t count) {
  for (std::int64_t i = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) * V; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x * V) {
    float v[V];
    detail::load<V>(x + i, v);
    detail::store<V>(y + i, v);
  }
}

template <class T>
__global__ void strided_copy_kernel(const T* x, StridedLayout layout, std::int64_t count, T* y) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t rest = i, source = 0;
    for (int d = layout.rank - 1; d >= 0; --d) {
      source += rest % layout.shape[d] * layout.strides[d];
      rest /= layout.shape[d];
    }
    y[i] = x[source];
  }
}

}  // namespace

cudaError_t gather_rows(DType dtype, const void* table, std::int64_t table_rows, std::int64_t width,
                        const std::int32_t* indices, std::int64_t rows, void* out, cudaStream_t stream) {
  if (rows * width == 0) return cudaSuccess;
  return dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto* t = static_cast<const T*>(table);
    auto* o = static_cast<T*>(out);
    if (vectorizable(width, table, out))
      gather_kernel<8><<<detail::blocks_for(rows * width / 8, kThreads), kThreads, 0, stream>>>(t, table_rows, width,
                                                                                                indices, rows, o);
    else
      gather_kernel<1>
          <<<detail::blocks_for(rows * width, kThreads), kThreads, 0, stream>>>(t, table_rows, width, indices, rows, o);
    return cudaGetLastError();
  });
}

cudaError_t sequence_positions(const std::int32_t* offsets, std::int64_t sequences, std::int64_t rows,
                               std::int32_t* positions, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  positions_kernel<<<detail::blocks_for(rows, kThreads), kThreads, 0, stream>>>(offsets, sequences, rows, positions);
  return cudaGetLastError();
}

cudaError_t bias_activation(DType dtype, const void* x, const void* bias, std::int64_t rows, std::int64_t width,
                            Activation activation, void* y, cudaStream_t stream) {
  if (rows * width == 0) return cudaSuccess;
  return dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto* xt = static_cast<const T*>(x);
    const auto* bt = static_cast<const T*>(bias);
    auto* yt = static_cast<T*>(y);
    const bool vector = vectorizable(width, x, bias, y);
    return launch_chained(vector ? bias_activation_kernel<8, T> : bias_activation_kernel<1, T>,
                          detail::blocks_for(rows * width / (vector ? 8 : 1), kThreads), kThreads, 0, stream, xt, bt,
                          rows, width, activation, yt);
  });
}

cudaError_t unary(DType dtype, Activation activation, const void* x, void* y, std::int64_t count, cudaStream_t stream) {
  return bias_activation(dtype, x, nullptr, 1, count, activation, y, stream);
}

cudaError_t binary(DType dtype, BinaryOp op, const void* a, const void* b, Broadcast b_shape, std::int64_t rows,
                   std::int64_t width, void* out, cudaStream_t stream, Activation a_activation) {
  if (rows * width == 0) return cudaSuccess;
  return dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto* at = static_cast<const T*>(a);
    const auto* bt = static_cast<const T*>(b);
    auto* ot = static_cast<T*>(out);
    const bool vector = vectorizable(width, a, b, out);
    return launch_chained(vector ? binary_kernel<8, T> : binary_kernel<1, T>,
                          detail::blocks_for(rows * width / (vector ? 8 : 1), kThreads), kThreads, 0, stream, op, at,
                          bt, b_shape, rows, width, ot, a_activation);
  });
}

cudaError_t gated(DType dtype, const void* x, std::int64_t rows, std::int64_t width, Activation activation, void* y,
                  cudaStream_t stream) {
  return dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (rows == 0 || width == 0) return cudaSuccess;
    const auto* xt = static_cast<const T*>(x);
    auto* yt = static_cast<T*>(y);
    const bool vector = vectorizable(width, x, y);
    const unsigned blocks = detail::blocks_for(rows * width / (vector ? 8 : 1), kThreads);
    if (rows * 2 * width < std::numeric_limits<std::int32_t>::max()) {
      const auto rows32 = static_cast<std::int32_t>(rows), width32 = static_cast<std::int32_t>(width);
      return launch_chained(vector ? gated_kernel<8, std::int32_t, T> : gated_kernel<1, std::int32_t, T>, blocks,
                            kThreads, 0, stream, xt, rows32, width32, activation, yt);
    }
    return launch_chained(vector ? gated_kernel<8, std::int64_t, T> : gated_kernel<1, std::int64_t, T>, blocks,
                          kThreads, 0, stream, xt, rows, width, activation, yt);
  });
}

cudaError_t cast(DType from, const void* x, DType to, void* y, std::int64_t count, cudaStream_t stream) {
  return dispatch(from, [&](auto from_tag) {
    return dispatch(to, [&](auto to_tag) {
      using From = decltype(from_tag);
      using To = decltype(to_tag);
      if (count == 0) return cudaSuccess;
      const auto* xt = static_cast<const From*>(x);
      auto* yt = static_cast<To*>(y);
      if (vectorizable(count, x, y))
        cast_kernel<8><<<detail::blocks_for(count / 8, kThreads), kThreads, 0, stream>>>(xt, yt, count);
      else
        cast_kernel<1><<<detail::blocks_for(count, kThreads), kThreads, 0, stream>>>(xt, yt, count);
      return cudaGetLastError();
    });
  });
}

cudaError_t strided_copy(DType dtype, const void* x, const StridedLayout& layout, void* y, cudaStream_t stream) {
  if (layout.rank < 0 || layout.rank > 4) return cudaErrorInvalidValue;
  std::int64_t count = 1;
  for (int d = 0; d < layout.rank; ++d) count *= layout.shape[d];
  if (count == 0) return cudaSuccess;
  return dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    strided_copy_kernel<<<detail::blocks_for(count, kThreads), kThreads, 0, stream>>>(static_cast<const T*>(x), layout,
                                                                                      count, static_cast<T*>(y));
    return cudaGetLastError();
  });
}

}  // namespace accel::graph::cuda

// cuda::rope: one thread per rotated pair (row, head, i < head_dim / 2), grid-stride; angles in float as
// transformers computes them (1 / theta^(2i / d), times the position), sine and cosine by the accurate sincosf.
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::graph::cuda {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void rope_kernel(const T* x, const std::int32_t* positions, std::int64_t rows, int heads, int head_dim,
                            float theta, T* y) {
  const int half = head_dim / 2;
  const std::int64_t pairs = rows * heads * half;
  for (std::int64_t item = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; item < pairs;
       item += std::int64_t{gridDim.x} * blockDim.x) {
    const int i = static_cast<int>(item % half);
    const std::int64_t head = item / half, r = head / heads;
    const float inverse = 1.0f / powf(theta, static_cast<float>(2 * i) / static_cast<float>(head_dim));
    const float angle = static_cast<float>(positions[r]) * inverse;
    float sine, cosine;
    sincosf(angle, &sine, &cosine);
    const std::int64_t a = head * head_dim + i, b = a + half;
    const float xa = detail::to_float(x[a]), xb = detail::to_float(x[b]);
    y[a] = detail::from_float<T>(xa * cosine - xb * sine);
    y[b] = detail::from_float<T>(xb * cosine + xa * sine);
  }
}

}  // namespace

cudaError_t rope(DType dtype, const void* x, const std::int32_t* positions, std::int64_t rows, int heads, int head_dim,
                 float theta, void* y, cudaStream_t stream) {
  if (heads <= 0 || head_dim <= 0 || head_dim % 2 != 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  return detail::dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    rope_kernel<T><<<detail::blocks_for(rows * heads * (head_dim / 2), kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(x), positions, rows, heads, head_dim, theta, static_cast<T*>(y));
    return cudaGetLastError();
  });
}

}  // namespace accel::graph::cuda

// cuda::rope: one thread per (row, i < head_dim / 2), grid-stride; the angle of pair i at the row's position in float
// as transformers computes it (1 / theta^(2i / d), times the position), its sine and cosine by the accurate sincosf,
// once for every head of the row: computed per head, they made this op 17 % of a Qwen3-0.6B pass on the H200
// (docs/PERFORMANCE.md §42). A warp's threads read consecutive columns of each head.
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::graph::cuda {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void rope_kernel(const T* x, const std::int32_t* positions, std::int64_t rows, int heads, int head_dim,
                            float theta, T* y) {
  const int half = head_dim / 2;
  const std::int64_t items = rows * half;
  for (std::int64_t item = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; item < items;
       item += std::int64_t{gridDim.x} * blockDim.x) {
    const int i = static_cast<int>(item % half);
    const std::int64_t r = item / half;
    const float inverse = 1.0f / powf(theta, static_cast<float>(2 * i) / static_cast<float>(head_dim));
    const float angle = static_cast<float>(positions[r]) * inverse;
    float sine, cosine;
    sincosf(angle, &sine, &cosine);
    const std::int64_t row = r * heads * head_dim;
    for (int head = 0; head < heads; ++head) {
      const std::int64_t a = row + std::int64_t{head} * head_dim + i, b = a + half;
      const float xa = detail::to_float(x[a]), xb = detail::to_float(x[b]);
      y[a] = detail::from_float<T>(xa * cosine - xb * sine);
      y[b] = detail::from_float<T>(xb * cosine + xa * sine);
    }
  }
}

}  // namespace

cudaError_t rope(DType dtype, const void* x, const std::int32_t* positions, std::int64_t rows, int heads, int head_dim,
                 float theta, void* y, cudaStream_t stream) {
  if (heads <= 0 || head_dim <= 0 || head_dim % 2 != 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  return detail::dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    rope_kernel<T><<<detail::blocks_for(rows * (head_dim / 2), kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(x), positions, rows, heads, head_dim, theta, static_cast<T*>(y));
    return cudaGetLastError();
  });
}

}  // namespace accel::graph::cuda

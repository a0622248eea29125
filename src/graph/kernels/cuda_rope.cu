// cuda::rope: one thread per (row, i < head_dim / 2, group of heads), grid-stride; the angle of pair i at the row's
// position in float as transformers computes it (1 / theta^(2i / d), times the position), its sine and cosine by the
// accurate sincosf, once for every head of the thread's group. Computed per head, they made this op 17 % of a
// Qwen3-0.6B pass on the H200 (docs/PERFORMANCE.md §43); all heads in one group left a query's dozen rows a few
// hundred threads, each walking 16 heads, which made a decoder query 5-9 % slower (§43). So a batch's rows get one
// group (the GPU is full anyway), and a few rows as many groups as fill ~256 k threads. A warp's threads read
// consecutive columns of each head.
#include <algorithm>

#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::graph::cuda {
namespace {

constexpr int kThreads = 256;
// About as many threads as an H100 or H200 keeps resident (132 SMs × 2,048).
constexpr std::int64_t kFullGpuThreads = 256 * 1024;

template <class T>
__global__ void rope_kernel(const T* x, const std::int32_t* positions, std::int64_t rows, int heads, int head_dim,
                            int groups, float theta, T* y) {
  const int half = head_dim / 2;
  const int group_heads = (heads + groups - 1) / groups;
  const std::int64_t items = rows * half * groups;
  for (std::int64_t item = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; item < items;
       item += std::int64_t{gridDim.x} * blockDim.x) {
    const int i = static_cast<int>(item % half);
    const std::int64_t rest = item / half;
    const int group = static_cast<int>(rest % groups);
    const std::int64_t r = rest / groups;
    const float inverse = 1.0f / powf(theta, static_cast<float>(2 * i) / static_cast<float>(head_dim));
    const float angle = static_cast<float>(positions[r]) * inverse;
    float sine, cosine;
    sincosf(angle, &sine, &cosine);
    const std::int64_t row = r * heads * head_dim;
    const int last = min(heads, (group + 1) * group_heads);
    for (int head = group * group_heads; head < last; ++head) {
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
  const std::int64_t pairs = rows * (head_dim / 2);
  const int groups = static_cast<int>(std::clamp<std::int64_t>(kFullGpuThreads / pairs, 1, heads));
  return detail::dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    rope_kernel<T><<<detail::blocks_for(pairs * groups, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(x), positions, rows, heads, head_dim, groups, theta, static_cast<T*>(y));
    return cudaGetLastError();
  });
}

}  // namespace accel::graph::cuda

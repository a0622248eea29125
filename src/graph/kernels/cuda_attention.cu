// cuda::packed_attention: the tensor-core kernel where it fits (cuda_flash_attention.cu), else a generic kernel
// for any storage type and head_dim <= 128: one warp per query row, each lane scoring one key of every 32 and
// owning head_dim / 32 output columns, with the softmax kept online (running maximum and sum) over key chunks.
#include "graph/kernels/cuda_attention.cuh"
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::graph::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kMaxHeadDim = 128;

template <class T>
__global__ void __launch_bounds__(kWarps * 32) generic_attention_kernel(detail::AttentionArgs args, int tiles) {
  __shared__ float query[kWarps][kMaxHeadDim];
  const std::int64_t s = blockIdx.x / tiles;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t begin = args.offsets[s];
  const int length = args.offsets[s + 1] - args.offsets[s];
  const int i = blockIdx.x % tiles * kWarps + warp;
  if (i >= length) return;
  const int d = args.head_dim;
  const std::int64_t column = std::int64_t{blockIdx.y} * d;
  const T* q = static_cast<const T*>(args.q) + (begin + i) * args.q_stride + column;
  const T* k = static_cast<const T*>(args.k) + begin * args.k_stride + column;
  const T* v = static_cast<const T*>(args.v) + begin * args.v_stride + column;
  // The scale goes into the query once, in the log2 domain, so each score's exponent is one exp2f.
  const float scale = args.scale * 1.4426950408889634f;
  for (int c = lane; c < d; c += 32) query[warp][c] = detail::to_float(q[c]) * scale;
  __syncwarp();
  float highest = -INFINITY, total = 0;
  float o[kMaxHeadDim / 32] = {};
  for (int j0 = 0; j0 < length; j0 += 32) {
    const int j = j0 + lane;
    float score = -INFINITY;
    if (j < length) {
      score = 0;
      for (int c = 0; c < d; ++c) score += query[warp][c] * detail::to_float(k[j * args.k_stride + c]);
    }
    const float next = fmaxf(highest, detail::warp_max(score));
    const float correction = exp2f(highest - next);
    const float p = j < length ? exp2f(score - next) : 0.0f;
    total = total * correction + detail::warp_sum(p);
    highest = next;
#pragma unroll
    for (int e = 0; e < kMaxHeadDim / 32; ++e) o[e] *= correction;
    const int chunk = min(32, length - j0);
    for (int jj = 0; jj < chunk; ++jj) {
      const float pj = __shfl_sync(0xffffffffu, p, jj);
      const T* row = v + (j0 + jj) * args.v_stride;
#pragma unroll
      for (int e = 0; e < kMaxHeadDim / 32; ++e)
        if (lane + 32 * e < d) o[e] += pj * detail::to_float(row[lane + 32 * e]);
    }
  }
  T* out = static_cast<T*>(args.out) + (begin + i) * args.out_stride + column;
#pragma unroll
  for (int e = 0; e < kMaxHeadDim / 32; ++e)
    if (lane + 32 * e < d) out[lane + 32 * e] = detail::from_float<T>(o[e] / total);
}

}  // namespace

cudaError_t packed_attention(DType dtype, const void* q, std::int64_t q_stride, const void* k, std::int64_t k_stride,
                             const void* v, std::int64_t v_stride, const std::int32_t* offsets, std::int64_t sequences,
                             std::int32_t max_length, int heads, int head_dim, float scale, void* out,
                             std::int64_t out_stride, cudaStream_t stream) {
  const detail::AttentionArgs args{q,         q_stride,   k,     k_stride, v,     v_stride, offsets,
                                   sequences, max_length, heads, head_dim, scale, out,      out_stride};
  if (head_dim <= 0 || head_dim > kMaxHeadDim || heads <= 0 || heads > 65535 || max_length < 0)
    return cudaErrorInvalidValue;
  if (sequences == 0 || max_length == 0) return cudaSuccess;
  if (detail::flash_attention_fits(dtype, args)) return detail::launch_flash_attention(dtype, args, stream);
  const int tiles = (max_length + kWarps - 1) / kWarps;
  if (sequences * tiles > 0x7fffffff) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(sequences * tiles), static_cast<unsigned>(heads));
  return detail::dispatch(dtype, [&](auto tag) {
    generic_attention_kernel<decltype(tag)><<<grid, kWarps * 32, 0, stream>>>(args, tiles);
    return cudaGetLastError();
  });
}

}  // namespace accel::graph::cuda

// Gemv of f32 and 16-bit matrices beyond the small kernel's bounds (src/libs/blas/blas_kernels.hpp): A read 16 bytes a
// load, each sum in f32 over a split of its terms, the splits' sums added in a fixed order and y rounded once. Launched
// chained (core/chained_launch.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/chained_launch.cuh"
#include "libs/blas/kernel_common.cuh"

namespace accel::blas {
namespace {

using namespace kernels;

using streamed_shape::kWarps;
static_assert(kWarps * 32 == static_cast<int>(kThreads), "a streamed block is kThreads threads");
static_assert(streamed_shape::kWarpSpan<2> <= static_cast<int>(kThreads) &&
                  streamed_shape::kWarpSpan<4> <= static_cast<int>(kThreads),
              "a plain block has a thread for each of its rows");

// Elements of T a lane loads at once (16 bytes), and the rows or terms a warp's loads cover.
template <class T>
constexpr int kPerLoad = streamed_shape::kPerLoad<sizeof(T)>;
template <class T>
constexpr int kWarpSpan = streamed_shape::kWarpSpan<sizeof(T)>;

template <class T>
struct StreamedTyped : MatrixVectorTyped<T, float> {
  std::int64_t m, n, splits, span;
  float* partial;  // splits > 1: per member, `splits` slots of one sum per element of y
};

template <class T>
__device__ void finish(const StreamedTyped<T>& p, std::int64_t member, std::int64_t i, std::int64_t length, float sum) {
  T& out = p.y[member * p.stride_y + vector_at(i, p.incy, length)];
  out = static_cast<T>(p.alpha * sum + (p.beta != 0.0f ? p.beta * static_cast<float>(out) : 0.0f));
}

// The sum of element i of y over split `split`: y's element itself when the sums are not split.
template <class T>
__device__ void give(const StreamedTyped<T>& p, std::int64_t member, std::int64_t split, std::int64_t i,
                     std::int64_t length, float sum) {
  if (p.splits == 1)
    finish(p, member, i, length, sum);
  else
    p.partial[(member * p.splits + split) * length + i] = sum;
}

template <class T>
__device__ void add_loaded(float (&sums)[kPerLoad<T>], const uint4& loaded, float factor) {
  const T* elements = reinterpret_cast<const T*>(&loaded);
#pragma unroll
  for (int e = 0; e < kPerLoad<T>; ++e) sums[e] += static_cast<float>(elements[e]) * factor;
}

// A lane's sums added pairwise, in a fixed order.
template <int kCount>
__device__ float pairwise(const float (&sums)[kCount]) {
  if constexpr (kCount == 4)
    return (sums[0] + sums[1]) + (sums[2] + sums[3]);
  else {
    static_assert(kCount == 8, "a lane holds 4 or 8 sums");
    return ((sums[0] + sums[1]) + (sums[2] + sums[3])) + ((sums[4] + sums[5]) + (sums[6] + sums[7]));
  }
}

// y = alpha A x + beta y, block (R, S, member): rows R * span on (span = 32 lanes' loads), lane l of each warp the rows
// of its 16-byte load of a column; the block's warps take every 8th column of split S; the warps' sums are added in
// order.
template <class T>
__global__ void __launch_bounds__(kThreads) streamed_plain(StreamedTyped<T> p) {
  constexpr int kLoad = kPerLoad<T>, kSpan = kWarpSpan<T>;
  wait_for_prior_kernel();
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t member = blockIdx.z;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * kSpan + lane * kLoad;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * p.span;
  const std::int64_t last = min(p.n, first + p.span);
  const T* a = p.a + member * p.stride_a;
  const T* x = p.x + member * p.stride_x;
  float sums[kLoad] = {};
  if (p.alpha != 0.0f && row0 < p.m) {
    if (row0 + kLoad <= p.m) {
#pragma unroll 8
      for (std::int64_t j = first + warp; j < last; j += kWarps)
        add_loaded<T>(sums, *reinterpret_cast<const uint4*>(a + j * p.lda + row0),
                      static_cast<float>(x[vector_at(j, p.incx, p.n)]));
    } else {
      for (std::int64_t j = first + warp; j < last; j += kWarps) {
        const float xj = static_cast<float>(x[vector_at(j, p.incx, p.n)]);
#pragma unroll  // whole, so that `sums` stays in registers
        for (int e = 0; e < kLoad; ++e)
          if (row0 + e < p.m) sums[e] += static_cast<float>(a[j * p.lda + row0 + e]) * xj;
      }
    }
  }
  // Laid out [warp][element of a lane][lane], padded: a lane's writes and a row's reads fall on few banks.
  __shared__ float warp_sums[kWarps][kLoad][33];
#pragma unroll
  for (int e = 0; e < kLoad; ++e) warp_sums[warp][e][lane] = sums[e];
  __syncthreads();
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kSpan + t;
  if (t >= kSpan || row >= p.m) return;  // f32: the block's 128 rows are its first four warps'
  float sum = 0.0f;
  for (int w = 0; w < kWarps; ++w) sum += warp_sums[w][t % kLoad][t / kLoad];
  give(p, member, blockIdx.y, row, p.m, sum);
}

// y = alpha Aᵀ x + beta y, block (C, S, member): a warp per column of A (an element of y), its lanes reading the
// column's terms of split S 16 bytes a load, x's matching elements 16 bytes a load where it is contiguous and
// aligned.
template <class T, bool kContiguousX>
__global__ void __launch_bounds__(kThreads) streamed_transposed(StreamedTyped<T> p) {
  constexpr int kLoad = kPerLoad<T>, kSpan = kWarpSpan<T>;
  wait_for_prior_kernel();
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t member = blockIdx.z;
  const std::int64_t column = static_cast<std::int64_t>(blockIdx.x) * kWarps + warp;
  if (column >= p.n) return;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * p.span;
  const std::int64_t last = min(p.m, first + p.span);
  const T* a = p.a + member * p.stride_a + column * p.lda;
  const T* x = p.x + member * p.stride_x;
  float sums[kLoad] = {};
  if (p.alpha != 0.0f) {
    std::int64_t i = first + lane * kLoad;
#pragma unroll 4
    for (; i + kLoad <= last; i += kSpan) {
      const uint4 loaded = *reinterpret_cast<const uint4*>(a + i);
      const T* elements = reinterpret_cast<const T*>(&loaded);
      if constexpr (kContiguousX) {
        const uint4 x_loaded = *reinterpret_cast<const uint4*>(x + i);
        const T* x_elements = reinterpret_cast<const T*>(&x_loaded);
#pragma unroll
        for (int e = 0; e < kLoad; ++e) sums[e] += static_cast<float>(elements[e]) * static_cast<float>(x_elements[e]);
      } else {
#pragma unroll
        for (int e = 0; e < kLoad; ++e)
          sums[e] += static_cast<float>(elements[e]) * static_cast<float>(x[vector_at(i + e, p.incx, p.m)]);
      }
    }
    for (; i < last; ++i)  // the split's last terms, past its last whole load (one lane's)
      sums[0] += static_cast<float>(a[i]) * static_cast<float>(x[vector_at(i, p.incx, p.m)]);
  }
  const float sum = warp_sum_to_first_lane(pairwise(sums));
  if (lane == 0) give(p, member, blockIdx.y, column, p.n, sum);
}

// Each element of y from its splits' sums: block (I, member) takes 32 elements, warp w the splits w, w + 8, ... of
// them (a row of the workspace read coalesced, a lane's loads in flight together), then the warps' sums are added in
// order. A few rounds of loads from L2 where one thread an element would wait on each of 64 splits in turn.
constexpr int kFinishElements = 32;

template <class T>
__global__ void __launch_bounds__(kThreads) streamed_finish(StreamedTyped<T> p, std::int64_t length) {
  wait_for_prior_kernel();
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kFinishElements + lane;
  const std::int64_t member = blockIdx.y;
  float sum = 0.0f;
  if (i < length) {
    const float* slots = p.partial + member * p.splits * length + i;
    constexpr int kInFlight = 4;
    float sums[kInFlight] = {};
    std::int64_t s = warp;
    for (; s + (kInFlight - 1) * kWarps < p.splits; s += kInFlight * kWarps) {
#pragma unroll
      for (int k = 0; k < kInFlight; ++k) sums[k] += slots[(s + k * kWarps) * length];
    }
    for (; s < p.splits; s += kWarps) sums[0] += slots[s * length];
    sum = (sums[0] + sums[1]) + (sums[2] + sums[3]);
  }
  __shared__ float warp_sums[kWarps][kFinishElements];
  warp_sums[warp][lane] = sum;
  __syncthreads();
  if (warp != 0 || i >= length) return;
  for (int w = 1; w < kWarps; ++w) sum += warp_sums[w][lane];
  finish(p, member, i, length, sum);
}

template <class T>
cudaError_t streamed(const GemvLaunch& l, const StreamedGemvSplit& split, void* workspace, cudaStream_t stream) {
  const StreamedTyped<T> p{MatrixVectorTyped<T, float>::of(l), l.m, l.n, split.splits, split.span,
                           static_cast<float*>(workspace)};
  const auto members = static_cast<unsigned>(l.batch), splits = static_cast<unsigned>(split.splits);
  const std::int64_t length = l.transpose ? l.n : l.m;
  cudaError_t launched;
  if (l.transpose) {
    const dim3 grid(static_cast<unsigned>((l.n + kWarps - 1) / kWarps), splits, members);
    const bool contiguous_x = l.incx == 1 && (l.batch == 1 || l.stride_x % kPerLoad<T> == 0) &&
                              reinterpret_cast<std::uintptr_t>(l.x) % 16 == 0;
    launched = contiguous_x ? launch_chained(streamed_transposed<T, true>, grid, dim3(kThreads), 0, stream, p)
                            : launch_chained(streamed_transposed<T, false>, grid, dim3(kThreads), 0, stream, p);
  } else {
    const dim3 grid(static_cast<unsigned>((l.m + kWarpSpan<T> - 1) / kWarpSpan<T>), splits, members);
    launched = launch_chained(streamed_plain<T>, grid, dim3(kThreads), 0, stream, p);
  }
  if (launched != cudaSuccess || split.splits == 1) return launched;
  return launch_chained(streamed_finish<T>,
                        dim3(static_cast<unsigned>((length + kFinishElements - 1) / kFinishElements), members),
                        dim3(kThreads), 0, stream, p, length);
}

}  // namespace

bool streamed_gemv_aligned(const GemvLaunch& launch) { return reinterpret_cast<std::uintptr_t>(launch.a) % 16 == 0; }

cudaError_t launch_streamed_gemv(const GemvLaunch& launch, const StreamedGemvSplit& split, void* workspace,
                                 cudaStream_t stream) {
  if (split.splits < 1 || !streamed_gemv_aligned(launch) || (split.splits > 1 && workspace == nullptr))
    return cudaErrorInvalidValue;
  if (launch.element == VectorElement::bf16) return streamed<__nv_bfloat16>(launch, split, workspace, stream);
  if (launch.element == VectorElement::f16) return streamed<__half>(launch, split, workspace, stream);
  if (launch.element == VectorElement::f32) return streamed<float>(launch, split, workspace, stream);
  return cudaErrorInvalidValue;
}

}  // namespace accel::blas

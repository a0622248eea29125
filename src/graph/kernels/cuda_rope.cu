// cuda::rope. The plain form (every head rotated, no norm): one thread per (row, i < head_dim / 2, group of heads),
// grid-stride; the angle of pair i at the row's position in float as transformers computes it (1 / theta^(2i / d),
// times the position), its sine and cosine by the accurate sincosf, once for every head of the thread's group.
// Computed per head, they made this op 17 % of a Qwen3-0.6B pass on the H200 (docs/PERFORMANCE.md §43); all heads in
// one group left a query's dozen rows a few hundred threads, each walking 16 heads, which made a decoder query 5-9 %
// slower (§43). So a batch's rows get one group (the GPU is full anyway), and a few rows as many groups as fill
// ~256 k threads. A warp's threads read consecutive columns of each head.
//
// The packed and normalised forms: 16-byte accesses where the head allows them (rope_heads_vector_kernel), else one
// warp per (row, group of heads), each lane holding pairs i = lane + 32 p of every head of its group, so that a head's
// sum of squares is one warp reduction and the angles are computed once per warp; groups sized as above, in warps. A
// query's q_norm, k_norm and two ropes are one launch (§51).
#include <algorithm>
#include <bit>

#include "core/chained_launch.cuh"
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
  wait_for_prior_kernel();
  const int half = head_dim / 2;
  const int group_heads = (heads + groups - 1) / groups;
  const std::int64_t items = rows * half * groups;
  for (std::int64_t item = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; item < items;
       item += std::int64_t{gridDim.x} * blockDim.x) {
    const int i = static_cast<int>(item % half);
    const std::int64_t rest = item / half;
    const int group = static_cast<int>(rest % groups);
    const std::int64_t r = rest / groups;
    const float inverse = detail::rope_inverse_frequency(i, head_dim, theta);
    const float angle = static_cast<float>(positions[r]) * inverse;
    float sine, cosine;
    sincosf(angle, &sine, &cosine);
    const std::int64_t row = r * heads * head_dim;
    const int last = min(heads, (group + 1) * group_heads);
    for (int head = group * group_heads; head < last; ++head) {
      const std::int64_t a = row + std::int64_t{head} * head_dim + i, b = a + half;
      float xa = detail::to_float(x[a]), xb = detail::to_float(x[b]);
      detail::rotate_pair(xa, xb, cosine, sine);
      y[a] = detail::from_float<T>(xa);
      y[b] = detail::from_float<T>(xb);
    }
  }
}

constexpr int kWarpsPerBlock = kThreads / 32;
constexpr int kMaxHalf = 128;  // half a head of the packed and normalised forms (head_dim <= 256)
constexpr std::int64_t kFullGpuWarps = kFullGpuThreads / 32;

template <class T>
__device__ __forceinline__ float rounded(float v) {
  return detail::to_float(detail::from_float<T>(v));
}

// kPairs: pairs per lane, ceil(head_dim / 64).
template <class T, int kPairs>
__global__ void rope_heads_kernel(const T* x, const std::int32_t* positions, std::int64_t rows, int heads, int kv_heads,
                                  int head_dim, int groups, float theta, const T* query_norm, const T* key_norm,
                                  float eps, T* y) {
  wait_for_prior_kernel();
  const int half = head_dim / 2, lane = static_cast<int>(threadIdx.x % 32);
  const int total = heads + 2 * kv_heads, rotated = heads + kv_heads;
  const int group_heads = (total + groups - 1) / groups;
  const std::int64_t items = rows * groups;
  const std::int64_t first_warp = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / 32;
  for (std::int64_t item = first_warp; item < items; item += std::int64_t{gridDim.x} * kWarpsPerBlock) {
    const std::int64_t r = item / groups;
    const int group = static_cast<int>(item % groups);
    float sine[kPairs], cosine[kPairs];
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      const int i = lane + 32 * p;
      const float inverse = detail::rope_inverse_frequency(i, head_dim, theta);
      sincosf(static_cast<float>(positions[r]) * inverse, &sine[p], &cosine[p]);
    }
    const int last = min(total, (group + 1) * group_heads);
    for (int head = group * group_heads; head < last; ++head) {
      const std::int64_t base = (r * total + head) * head_dim;
      float a[kPairs], b[kPairs];
#pragma unroll
      for (int p = 0; p < kPairs; ++p) {
        const int i = lane + 32 * p;
        a[p] = i < half ? detail::to_float(x[base + i]) : 0.0f;
        b[p] = i < half ? detail::to_float(x[base + i + half]) : 0.0f;
      }
      if (head >= rotated) {  // v's heads, packed after k's
        if (x != y) {
#pragma unroll
          for (int p = 0; p < kPairs; ++p) {
            const int i = lane + 32 * p;
            if (i < half) y[base + i] = x[base + i], y[base + i + half] = x[base + i + half];
          }
        }
        continue;
      }
      if (const T* gamma = head < heads ? query_norm : key_norm; gamma != nullptr) {
        float squares = 0.0f;
#pragma unroll
        for (int p = 0; p < kPairs; ++p) squares += a[p] * a[p] + b[p] * b[p];
        const float scale = 1.0f / sqrtf(detail::warp_sum(squares) / static_cast<float>(head_dim) + eps);
#pragma unroll
        for (int p = 0; p < kPairs; ++p) {
          const int i = lane + 32 * p;
          if (i >= half) continue;
          a[p] = rounded<T>(a[p] * scale * detail::to_float(gamma[i]));
          b[p] = rounded<T>(b[p] * scale * detail::to_float(gamma[i + half]));
        }
      }
#pragma unroll
      for (int p = 0; p < kPairs; ++p) {
        const int i = lane + 32 * p;
        if (i >= half) continue;
        detail::rotate_pair(a[p], b[p], cosine[p], sine[p]);
        y[base + i] = detail::from_float<T>(a[p]);
        y[base + i + half] = detail::from_float<T>(b[p]);
      }
    }
  }
}

// The packed and normalised forms where each half-head is a multiple of 8 elements in 16-byte aligned rows: a warp
// takes a row (or a group of its heads) and computes its angles once, each lane two of them (the inverse frequencies
// once per thread), into the warp's own shared memory, so no block-wide barrier holds the warps of other rows. Each
// head goes to `lanes` = half / 8 consecutive lanes (a power of two up to 16), each of which moves 8 pairs with
// 16-byte accesses, its norm a reduction over those lanes; a warp steps over 32 / lanes heads at a time. Written over
// its input (x == y), v's heads are neither read nor written. A block per row, its angles behind two barriers, moved a
// Qwen3-0.6B batch at ~1.9-2.3 TB/s (§61); the warp-per-row form with 2-byte accesses at ~2.1 (§51). Bounded to 4
// blocks an SM (64 registers): at 6 (40 registers) it spilled 128 bytes a thread and took 82.3 µs for a batch's 16,384
// rows, 66.6 µs at 4 (3.0 TB/s); 3 blocks (72 registers, no spill) took 75.4 µs (docs/PERFORMANCE.md §76). The angles
// by reduced_sincos (within about 1e-6 of sincosf, far under a 16-bit element's rounding): sincosf's slow path made
// a query's twelve rows, whose time is the angles', 4-12 % slower at this bound.
template <class T>
__global__ void __launch_bounds__(kThreads, 4)
    rope_heads_vector_kernel(const T* x, const std::int32_t* positions, std::int64_t rows, int heads, int kv_heads,
                             int head_dim, int groups, float theta, const T* query_norm, const T* key_norm, float eps,
                             T* y) {
  constexpr int kAngles = kMaxHalf / 32;  // angles a lane computes
  __shared__ float sines[kWarpsPerBlock][kMaxHalf], cosines[kWarpsPerBlock][kMaxHalf];
  const int half = head_dim / 2, lanes = half / 8, slots = 32 / lanes;
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const int slot = lane / lanes, first_pair = lane % lanes * 8;
  const unsigned head_lanes = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u) << (slot * lanes);
  const int total = heads + 2 * kv_heads, rotated = heads + kv_heads;
  const int moved = x == y ? rotated : total;  // v's heads, packed after k's, stay in place
  const int group_heads = (moved + groups - 1) / groups;
  float inverse[kAngles];
#pragma unroll
  for (int p = 0; p < kAngles; ++p) {
    const int i = lane + 32 * p;
    inverse[p] = i < half ? detail::rope_inverse_frequency(i, head_dim, theta) : 0.0f;
  }
  wait_for_prior_kernel();
  const std::int64_t warps = std::int64_t{gridDim.x} * kWarpsPerBlock;
  for (std::int64_t item = blockIdx.x * std::int64_t{kWarpsPerBlock} + warp; item < rows * groups; item += warps) {
    const std::int64_t r = item / groups;
    const int first = static_cast<int>(item % groups) * group_heads, last = min(moved, first + group_heads);
    const auto position = static_cast<float>(positions[r]);
    __syncwarp();  // the previous row's angles are read
#pragma unroll
    for (int p = 0; p < kAngles; ++p) {
      const int i = lane + 32 * p;
      if (i < half) detail::reduced_sincos(position * inverse[p], &sines[warp][i], &cosines[warp][i]);
    }
    __syncwarp();
    for (int head = first + slot; head < last; head += slots) {
      const std::int64_t base = (r * total + head) * head_dim + first_pair;
      float a[8], b[8];
      detail::load<8>(x + base, a);
      detail::load<8>(x + base + half, b);
      if (head >= rotated) {  // v's heads, copied when the output is apart from the input
        detail::store<8>(y + base, a), detail::store<8>(y + base + half, b);
        continue;
      }
      if (const T* gamma = head < heads ? query_norm : key_norm; gamma != nullptr) {
        float squares = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) squares += a[e] * a[e] + b[e] * b[e];
        for (int delta = lanes / 2; delta > 0; delta /= 2) squares += __shfl_xor_sync(head_lanes, squares, delta);
        const float scale = 1.0f / sqrtf(squares / static_cast<float>(head_dim) + eps);
        float ga[8], gb[8];
        detail::load<8>(gamma + first_pair, ga);
        detail::load<8>(gamma + first_pair + half, gb);
#pragma unroll
        for (int e = 0; e < 8; ++e) a[e] = rounded<T>(a[e] * scale * ga[e]), b[e] = rounded<T>(b[e] * scale * gb[e]);
      }
#pragma unroll
      for (int e = 0; e < 8; ++e)
        detail::rotate_pair(a[e], b[e], cosines[warp][first_pair + e], sines[warp][first_pair + e]);
      detail::store<8>(y + base, a);
      detail::store<8>(y + base + half, b);
    }
  }
}

template <class T, int kPairs>
cudaError_t launch_heads(const void* x, const std::int32_t* positions, std::int64_t rows, int heads, int kv_heads,
                         int head_dim, float theta, const void* query_norm, const void* key_norm, float eps, void* y,
                         cudaStream_t stream) {
  const int total = heads + 2 * kv_heads;
  const int groups = static_cast<int>(std::clamp<std::int64_t>(kFullGpuWarps / rows, 1, total));
  return launch_chained(rope_heads_kernel<T, kPairs>, detail::blocks_for(rows * groups, kWarpsPerBlock), kThreads, 0,
                        stream, static_cast<const T*>(x), positions, rows, heads, kv_heads, head_dim, groups, theta,
                        static_cast<const T*>(query_norm), static_cast<const T*>(key_norm), eps, static_cast<T*>(y));
}

}  // namespace

cudaError_t rope(DType dtype, const void* x, const std::int32_t* positions, std::int64_t rows, int heads, int head_dim,
                 float theta, void* y, cudaStream_t stream, int kv_heads, const void* query_norm, const void* key_norm,
                 float eps) {
  if (heads <= 0 || kv_heads < 0 || head_dim <= 0 || head_dim % 2 != 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (kv_heads > 0 || query_norm != nullptr) {
    if (head_dim > 256 || (key_norm != nullptr) != (kv_heads > 0 && query_norm != nullptr))
      return cudaErrorInvalidValue;
    const int half = head_dim / 2;
    if (half % 8 == 0 && std::has_single_bit(static_cast<unsigned>(half / 8)) &&
        detail::vectorizable(half, x, y, query_norm, key_norm)) {
      const int moved = x == y ? heads + kv_heads : heads + 2 * kv_heads, slots = 32 / (half / 8);
      const int groups =
          static_cast<int>(std::clamp<std::int64_t>(kFullGpuWarps / rows, 1, (moved + slots - 1) / slots));
      return detail::dispatch(dtype, [&](auto tag) {
        using T = decltype(tag);
        return launch_chained(rope_heads_vector_kernel<T>, detail::blocks_for(rows * groups, kWarpsPerBlock), kThreads,
                              0, stream, static_cast<const T*>(x), positions, rows, heads, kv_heads, head_dim, groups,
                              theta, static_cast<const T*>(query_norm), static_cast<const T*>(key_norm), eps,
                              static_cast<T*>(y));
      });
    }
    return detail::dispatch(dtype, [&](auto tag) {
      using T = decltype(tag);
      const auto launch = [&]<int kPairs>() {
        return launch_heads<T, kPairs>(x, positions, rows, heads, kv_heads, head_dim, theta, query_norm, key_norm, eps,
                                       y, stream);
      };
      switch ((head_dim + 63) / 64) {
        case 1: return launch.template operator()<1>();
        case 2: return launch.template operator()<2>();
        case 3: return launch.template operator()<3>();
        default: return launch.template operator()<4>();
      }
    });
  }
  const std::int64_t pairs = rows * (head_dim / 2);
  const int groups = static_cast<int>(std::clamp<std::int64_t>(kFullGpuThreads / pairs, 1, heads));
  return detail::dispatch(dtype, [&](auto tag) {
    using T = decltype(tag);
    return launch_chained(rope_kernel<T>, detail::blocks_for(pairs * groups, kThreads), kThreads, 0, stream,
                          static_cast<const T*>(x), positions, rows, heads, head_dim, groups, theta,
                          static_cast<T*>(y));
  });
}

}  // namespace accel::graph::cuda

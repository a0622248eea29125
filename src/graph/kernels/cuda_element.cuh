// What the CUDA graph kernels share: element conversions, rotary angles, 8-wide vector access, the activations in
// float, warp reductions, the row-to-sequence search and the dtype dispatch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "accel/core/dtype.hpp"
#include "graph/kernels/op_kinds.hpp"

namespace accel::graph::cuda::detail {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T>
__device__ __forceinline__ T from_float(float x) {
  if constexpr (sizeof(T) == 4)
    return x;
  else if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(x);
  else
    return __float2bfloat16_rn(x);
}

// Rotary pair i's inverse frequency 1 / theta^(2i / d), in float as transformers computes it, and the pair
// (a, b) = (x_i, x_{i + d/2}) rotated by an angle: cuda::rope and the attention kernel that rotates q and k as it
// loads them (cuda_resident_attention.cu) share both.
__device__ __forceinline__ float rope_inverse_frequency(int i, int head_dim, float theta) {
  return 1.0f / powf(theta, static_cast<float>(2 * i) / static_cast<float>(head_dim));
}

// sin and cos of `angle` by the special-function unit, after reducing it to [-pi, pi] in float with 2 pi in two
// parts: within about 1e-6 of sincosf for the angles of positions below 10^5, in ~10 instructions against sincosf's
// ~40. For a kernel that computes each angle once per head rather than once per row (the attention's rotation).
__device__ __forceinline__ void reduced_sincos(float angle, float* sine, float* cosine) {
  const float turns = rintf(angle * 0.159154943091895336f);
  const float reduced = fmaf(turns, 1.74845553e-7f, fmaf(turns, -6.28318548f, angle));
  __sincosf(reduced, sine, cosine);
}
__device__ __forceinline__ void rotate_pair(float& a, float& b, float cosine, float sine) {
  const float rotated_a = a * cosine - b * sine;
  b = b * cosine + a * sine;
  a = rotated_a;
}

// V consecutive elements as floats: V == 8 is one 16-byte access for 16-bit types and two for float (the caller
// checked the alignment), V == 1 a scalar one.
template <int V, class T>
__device__ __forceinline__ void load(const T* p, float (&v)[V]) {
  if constexpr (V == 8 && sizeof(T) == 4) {
    const float4 a = reinterpret_cast<const float4*>(p)[0];
    const float4 b = reinterpret_cast<const float4*>(p)[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else if constexpr (V == 8) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = to_float(e[i]);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = to_float(p[i]);
  }
}

template <int V, class T>
__device__ __forceinline__ void store(T* p, const float (&v)[V]) {
  if constexpr (V == 8 && sizeof(T) == 4) {
    reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
  } else if constexpr (V == 8) {
    uint4 raw;
    T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int i = 0; i < 8; ++i) e[i] = from_float<T>(v[i]);
    *reinterpret_cast<uint4*>(p) = raw;
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) p[i] = from_float<T>(v[i]);
  }
}

template <int V>
__device__ __forceinline__ void fill(float (&v)[V], float value) {
#pragma unroll
  for (int i = 0; i < V; ++i) v[i] = value;
}

// The float forms of accel::activate's definitions (erff/tanhf/expf, not the fast intrinsics, so that the CUDA
// results stay within float rounding of the CPU's).
__device__ __forceinline__ float activate(Activation activation, float x) {
  switch (activation) {
    case Activation::identity: return x;
    case Activation::relu: return fmaxf(x, 0.0f);
    case Activation::gelu_tanh: return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case Activation::silu: return x / (1.0f + expf(-x));
    case Activation::gelu_erf: return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
    case Activation::sigmoid: return 1.0f / (1.0f + expf(-x));
    case Activation::tanh: return tanhf(x);
    case Activation::log1p_relu: return log1pf(fmaxf(x, 0.0f));
  }
  return x;
}

// activate() where the result is rounded to 16 bits next (the fused gated product's epilogue, docs/PERFORMANCE.md §85),
// in an epilogue no product overlaps, where expf with an IEEE division, or erff, took 20-30 instructions an element:
// - SiLU by the fast intrinsics, whose relative error (__expf's 2 + 1.17|x| ulp: under 1.5e-6 for |x| < 10, 1.3e-5 at
//   the ends of its range) is far below that rounding (2^-9 for bf16, 2^-11 for f16);
// - exact GELU as its tanh form, as a plain f16/bf16 matmul's runs through cuBLASLt's GELU epilogue (within 4.7e-4 of
//   erf's, §39): x (1 + tanh y) / 2 = x sigmoid(2y), 2y = 2√(2/π) (x + 0.044715 x³), by the same intrinsics, within
//   1.4e-6 of the tanh form.
__device__ __forceinline__ float activate_before_rounding(Activation activation, float x) {
  const auto x_times_sigmoid = [x](float z) { return __fdividef(x, 1.0f + __expf(-z)); };
  if (activation == Activation::silu) return x_times_sigmoid(x);
  if (activation == Activation::gelu_erf) return x_times_sigmoid(1.5957691216057308f * fmaf(0.044715f * x, x * x, x));
  return activate(activation, x);
}

__device__ __forceinline__ float warp_sum(float value) {
#pragma unroll
  for (int delta = 16; delta > 0; delta /= 2) value += __shfl_xor_sync(0xffffffffu, value, delta);
  return value;
}

__device__ __forceinline__ float warp_max(float value) {
#pragma unroll
  for (int delta = 16; delta > 0; delta /= 2) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, delta));
  return value;
}

// The sequence that holds `row`, or -1 for a padding row: the last s with offsets[s] <= row (empty sequences
// share their offset with the next one, so the last is the one that can hold it), then row < offsets[s + 1].
__device__ __forceinline__ std::int64_t sequence_of(const std::int32_t* offsets, std::int64_t sequences,
                                                    std::int64_t row) {
  std::int64_t low = 0, high = sequences;  // invariant: the answer is in [low - 1, high)
  while (low < high) {
    const std::int64_t middle = (low + high) / 2;
    if (offsets[middle] <= row)
      low = middle + 1;
    else
      high = middle;
  }
  const std::int64_t s = low - 1;
  return s >= 0 && row < offsets[s + 1] ? s : -1;
}

// Sequence s's rows [begin, begin + length), kept inside [0, rows) and at most max_length long whatever the offsets
// hold: offsets are data from outside the graph, and a wrong one must cost wrong numbers, never a read or write
// outside a kernel's buffers (a fault that would end the device's context).
struct SequenceSpan {
  std::int64_t begin;
  int length;
};
__device__ __forceinline__ SequenceSpan sequence_span(const std::int32_t* offsets, std::int64_t s, std::int64_t rows,
                                                      std::int64_t max_length) {
  const std::int64_t begin = min(max(std::int64_t{offsets[s]}, std::int64_t{0}), rows);
  const std::int64_t end = min(max(std::int64_t{offsets[s + 1]}, begin), rows);
  return {begin, static_cast<int>(min(end - begin, max_length))};
}

// `launch(T{})` with T the element type of `dtype`.
template <class Launch>
cudaError_t dispatch(DType dtype, Launch&& launch) {
  switch (dtype) {
    case DType::f32: return launch(float{});
    case DType::f16: return launch(__half{});
    case DType::bf16: return launch(__nv_bfloat16{});
    default: return cudaErrorInvalidValue;
  }
}

inline bool aligned16(const void* p) { return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Whether rows of `width` elements starting at each pointer (null ones ignored) take the 8-wide path.
template <class... Pointers>
bool vectorizable(std::int64_t width, Pointers... pointers) {
  return width % 8 == 0 && (aligned16(pointers) && ...);
}

// Blocks for `work` items at `per_block` each, capped by what a grid-stride loop needs to fill the GPU.
inline unsigned blocks_for(std::int64_t work, int per_block) {
  const std::int64_t blocks = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > (1 << 20) ? (1 << 20) : blocks));
}

}  // namespace accel::graph::cuda::detail

// The tensor-core pieces the graph kernels share: one m16n8k16 multiply-add with float accumulators (mma.sync, the
// form sm_80 and later run) and the packing of two floats into the f16/bf16 pair its operands take, and back.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace accel::graph::cuda::detail {

__device__ __forceinline__ std::uint32_t pack(float low, float high, __half) {
  const __half2 h = __floats2half2_rn(low, high);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}
__device__ __forceinline__ std::uint32_t pack(float low, float high, __nv_bfloat16) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(low, high);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

__device__ __forceinline__ float2 unpack(std::uint32_t pair, __half) {
  return __half22float2(*reinterpret_cast<const __half2*>(&pair));
}
__device__ __forceinline__ float2 unpack(std::uint32_t pair, __nv_bfloat16) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&pair));
}

// D += A B for one 16x8x16 tile (A row-major, B column-major, float accumulators). Fragments, with group = lane / 4
// and quad = lane % 4: a = {A[group][2q..], A[group+8][2q..], A[group][2q+8..], A[group+8][2q+8..]}, b =
// {B[2q..][group], B[2q+8..][group]}, d = {D[group][2q], D[group][2q+1], D[group+8][2q], D[group+8][2q+1]}.
template <class T>
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace accel::graph::cuda::detail

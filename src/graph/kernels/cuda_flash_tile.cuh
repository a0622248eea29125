// One warp's share of the tensor-core attention kernels (cuda_flash_attention.cu streams key/value tiles through
// shared memory, cuda_resident_attention.cu holds a whole sequence's there): 16 query rows of one (sequence, head),
// their Q fragments, the online softmax state and the output accumulators in registers, and one step over a few
// keys already in shared memory. Per step the warp computes S = Q K^T with mma.sync m16n8k16 (float accumulation, K's
// fragments from ldmatrix), updates the online softmax in float in the log2 domain, and feeds P, rounded to the
// storage type, straight from the S accumulators (whose layout is the next mma's A layout) into O += P V, V's
// fragments coming from ldmatrix.trans.
// A step whose keys are all masked for a row leaves the row's state as it was (before the row's first valid key its
// maximum stays -inf: the exponentials are then taken against 0 and give zeros).
#pragma once

#include "graph/kernels/cuda_attention.cuh"
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_mma.cuh"

namespace accel::graph::cuda::detail {

// Keys a warp takes in one step, in both kernels. The H200 chose it (docs/PERFORMANCE.md §43, §59): 32 against 64 in
// the streaming kernel; 32 against 64 and 128 in the resident one.
constexpr int kKeysPerStep = 32;

// `keys` rounded up to whole steps.
__host__ __device__ constexpr int whole_steps(int keys) {
  return (keys + kKeysPerStep - 1) / kKeysPerStep * kKeysPerStep;
}

// 2^x by the special-function unit (ex2.approx, flushing denormals): P is rounded to f16/bf16 next, so its 2^-22
// relative error is far below what the rounding costs; exp2f's exact form took extra instructions per element.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* shared) {
  const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* shared) {
  const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// 16 bytes from global to shared, or 16 zero bytes when !valid (cp.async's source size 0).
__device__ __forceinline__ void copy16(void* shared, const void* global, bool valid) {
  const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(valid ? 16 : 0));
}

// Which keys a query row sees: those before the sequence's end, up to the row itself when causal, and within the
// window of it when one is set.
struct KeyMask {
  int length;
  bool causal;
  int window;
  __device__ bool sees(int row, int key) const {
    return key < length && (!causal || key <= row) && (window <= 0 || abs(key - row) <= window);
  }
};

template <class T, int D>
struct FlashRows {
  int row0, row1;  // this lane's two rows of the warp's 16 (group and group + 8)
  std::uint32_t qf[D / 16][4];
  float highest[2] = {-INFINITY, -INFINITY}, total[2] = {0, 0};
  float o[D / 8][4] = {};

  // Rows first..first+15 of q (row-major, `stride` elements apart); rows at or past `length` read as zeros.
  __device__ FlashRows(const T* q, std::int64_t stride, int first, int length) {
    const int lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
    row0 = first + group;
    row1 = row0 + 8;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const int c = kk * 16 + quad * 2;
      const auto at = [&](int row, int col) {
        return row < length ? *reinterpret_cast<const std::uint32_t*>(q + row * stride + col) : 0u;
      };
      qf[kk][0] = at(row0, c);
      qf[kk][1] = at(row1, c);
      qf[kk][2] = at(row0, c + 8);
      qf[kk][3] = at(row1, c + 8);
    }
  }

  // Rotates the rows' q as cuda::rope does, each row at positions[row], pair i by inverse_frequencies[i] (both in
  // shared memory): pair i < D/2 of the head is columns i and i + D/2, which lie in fragments kk and kk + D/32 of the
  // same lane, at the same place. Rows at or past `length` stay zeros.
  __device__ void rotate(const float* positions, int length, const float* inverse_frequencies) {
    const int quad = threadIdx.x % 4;
    const float position[2] = {row0 < length ? positions[row0] : 0.0f, row1 < length ? positions[row1] : 0.0f};
#pragma unroll
    for (int kk = 0; kk < D / 32; ++kk)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 low = unpack(qf[kk][j], T{}), high = unpack(qf[kk + D / 32][j], T{});
        float a[2] = {low.x, low.y}, b[2] = {high.x, high.y};
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float sine, cosine;
          reduced_sincos(position[j % 2] * inverse_frequencies[kk * 16 + quad * 2 + (j / 2) * 8 + e], &sine, &cosine);
          rotate_pair(a[e], b[e], cosine, sine);
        }
        qf[kk][j] = pack(a[0], a[1], T{});
        qf[kk + D / 32][j] = pack(b[0], b[1], T{});
      }
  }

  // Keys key0..key0+kKeysPerStep-1, rows of `keys` and `values` in shared memory `stride` elements apart; `masked`
  // false when every row of the warp sees every one of them. `scale` is the scores' scale times log2(e), positive.
  __device__ void step(const T* keys, const T* values, int stride, int key0, bool masked, const KeyMask& mask,
                       float scale) {
    const int lane = threadIdx.x % 32, quad = lane % 4;
    float sc[kKeysPerStep / 8][4] = {};
#pragma unroll
    for (int n = 0; n < kKeysPerStep / 8; ++n) {
      // K's fragments by ldmatrix, four 8 x 8 matrices a load (keys n*8..n*8+7, columns kk*16 + 0, 8, 16, 24): lane l
      // addresses key n*8 + l%8 at column kk*16 + l/8*8, and gets B's two registers for kk and kk + 1. Fragments by
      // 32-bit loads took four times the instructions, in a kernel bound by issuing them: 2-4 % slower
      // (docs/PERFORMANCE.md §39, §84).
      const T* key_row = keys + (n * 8 + lane % 8) * stride + lane / 8 * 8;
#pragma unroll
      for (int kk = 0; kk < D / 16; kk += 2) {
        std::uint32_t b[4];
        ldmatrix_x4(b, key_row + kk * 16);
        mma<T>(sc[n], qf[kk], b[0], b[1]);
        mma<T>(sc[n], qf[kk + 1], b[2], b[3]);
      }
    }
    // Fragment element e of n-tile n is key n*8 + quad*2 + e%2 of row group (e < 2) or group + 8.
    if (masked) {
#pragma unroll
      for (int n = 0; n < kKeysPerStep / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (!mask.sees(e < 2 ? row0 : row1, key0 + n * 8 + quad * 2 + e % 2)) sc[n][e] = -INFINITY;
    }
    // The maximum is taken of the raw scores (the scale is positive: flash_attention_fits), and each exponential
    // is one multiply-add and one ex2.
    float step_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < kKeysPerStep / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) step_max[e / 2] = fmaxf(step_max[e / 2], sc[n][e]);
    float correction[2], shift[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      step_max[h] = fmaxf(step_max[h], __shfl_xor_sync(0xffffffffu, step_max[h], 1));
      step_max[h] = fmaxf(step_max[h], __shfl_xor_sync(0xffffffffu, step_max[h], 2));
      const float next = fmaxf(highest[h], step_max[h] * scale);  // -inf until the row's first valid key
      correction[h] = next == -INFINITY ? 1.0f : exp2_approx(highest[h] - next);
      highest[h] = next;
      shift[h] = next == -INFINITY ? 0.0f : next;
      total[h] *= correction[h];
    }
#pragma unroll
    for (int n = 0; n < kKeysPerStep / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        sc[n][e] = exp2_approx(fmaf(sc[n][e], scale, -shift[e / 2]));
        total[e / 2] += sc[n][e];
      }
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[n][e] *= correction[e / 2];

#pragma unroll
    for (int kk = 0; kk < kKeysPerStep / 16; ++kk) {
      const std::uint32_t pf[4] = {pack(sc[2 * kk][0], sc[2 * kk][1], T{}), pack(sc[2 * kk][2], sc[2 * kk][3], T{}),
                                   pack(sc[2 * kk + 1][0], sc[2 * kk + 1][1], T{}),
                                   pack(sc[2 * kk + 1][2], sc[2 * kk + 1][3], T{})};
#pragma unroll
      for (int n = 0; n < D / 8; n += 2) {
        // Lanes 0-15 address keys kk*16 + 0..15 at columns n*8, lanes 16-31 the same keys at n*8 + 8.
        std::uint32_t b[4];
        ldmatrix_x4_trans(b, values + (kk * 16 + lane % 16) * stride + n * 8 + lane / 16 * 8);
        mma<T>(o[n], pf, b[0], b[1]);
        mma<T>(o[n + 1], pf, b[2], b[3]);
      }
    }
  }

  // The rows' outputs, normalised, into out (row-major, `stride` apart); rows at or past `length` are left alone.
  __device__ void store(T* out, std::int64_t stride, int length) {
    const int quad = threadIdx.x % 4;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      total[h] += __shfl_xor_sync(0xffffffffu, total[h], 1);
      total[h] += __shfl_xor_sync(0xffffffffu, total[h], 2);
      const int row = h == 0 ? row0 : row1;
      if (row >= length) continue;
      const float inverse = 1.0f / total[h];
#pragma unroll
      for (int n = 0; n < D / 8; ++n)
        *reinterpret_cast<std::uint32_t*>(out + row * stride + n * 8 + quad * 2) =
            pack(o[n][2 * h] * inverse, o[n][2 * h + 1] * inverse, T{});
    }
  }
};

}  // namespace accel::graph::cuda::detail

// The block reflectors of the Householder QR kernels (qr_kernel.cu): their shapes, loads and stores of four elements,
// a block's sums of V's rows times X's (VᵀX, by a small product per lane over rows staged in shared memory), T of a
// block reflector from its reflectors' products with each other (LAPACK's larft) and the kernel that multiplies
// columns by one (LAPACK's larfb). Device code, included by nvcc alone.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace accel::solver::householder {

constexpr int kPanel = 32;        // reflectors made by one block at a time
constexpr int kTile = 16;         // columns a block of the update takes
constexpr int kMaxThreads = 256;  // a row per thread up to kSmallQrMaxRows
constexpr int kMaxWarps = kMaxThreads / 32;

inline __device__ float reciprocal(float x) { return __frcp_rn(x); }
inline __device__ double reciprocal(double x) { return __drcp_rn(x); }

// Four consecutive elements of shared memory, 16-byte aligned, in as few loads as the type allows.
inline __device__ void load4(const float* p, float (&out)[4]) {
  const float4 q = *reinterpret_cast<const float4*>(p);
  out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
}
inline __device__ void load4(const double* p, double (&out)[4]) {
  const double2 low = reinterpret_cast<const double2*>(p)[0], high = reinterpret_cast<const double2*>(p)[1];
  out[0] = low.x, out[1] = low.y, out[2] = high.x, out[3] = high.y;
}

inline __device__ void store4(float* p, float a, float b, float c, float d) {
  *reinterpret_cast<float4*>(p) = make_float4(a, b, c, d);
}
inline __device__ void store4(double* p, double a, double b, double c, double d) {
  reinterpret_cast<double2*>(p)[0] = make_double2(a, b);
  reinterpret_cast<double2*>(p)[1] = make_double2(c, d);
}

// The dynamic shared memory sum_products stages rows in: 32 rows of kStagePitch elements per warp.
constexpr int kStagePitch = kPanel + kTile + 4;  // a multiple of 4 (aligned loads of four), rows 4 banks apart
template <class T>
std::size_t stage_bytes(int threads) {
  return std::size_t(threads) * kStagePitch * sizeof(T);
}

// Σ over the block's rows of v[l] x[c] (l < kPanel, c < kTile) into out[l * pitch + c] in shared memory, by every
// thread. Each warp stages its 32 rows in `stage`, then each lane sums a 4 x 4 block of the result over them (lane / 4
// picks four of the l, lane % 4 four of the c): 64 loads and 512 multiply-adds a lane, where a reduction of each
// product across the warp took 2,500 instructions a warp. The warps' blocks are then summed over the block. Ends with
// the block in step, `stage` free.
template <class T>
__device__ void sum_products(const T (&v)[kPanel], const T (&x)[kTile], T* stage, T* out, int pitch) {
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
  T* rows = stage + warp * 32 * kStagePitch;
#pragma unroll
  for (int l = 0; l < kPanel; ++l) rows[lane * kStagePitch + l] = v[l];
#pragma unroll
  for (int c = 0; c < kTile; ++c) rows[lane * kStagePitch + kPanel + c] = x[c];
  __syncwarp();
  const int l0 = lane / 4 * 4, c0 = lane % 4 * 4;
  T block[4][4] = {};
#pragma unroll 4
  for (int r = 0; r < 32; ++r) {
    T vs[4], xs[4];
    load4(rows + r * kStagePitch + l0, vs);
    load4(rows + r * kStagePitch + kPanel + c0, xs);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int k = 0; k < 4; ++k) block[i][k] += vs[i] * xs[k];
    }
  }
  __syncwarp();  // the warp's rows read before its block takes their place
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int k = 0; k < 4; ++k) rows[(l0 + i) * kTile + c0 + k] = block[i][k];
  }
  __syncthreads();
  for (int e = t; e < kPanel * kTile; e += blockDim.x) {
    T total = stage[e];
    for (int q = 1; q < warps; ++q) total += stage[q * 32 * kStagePitch + e];
    out[e / kTile * pitch + e % kTile] = total;
  }
  __syncthreads();
}

// T of the block reflector H(0) … H(w-1) = I - V T Vᵀ (LAPACK's larft, forward and columnwise), by one warp: lane l
// makes row l in registers, T(l, l) = tau(l) and T(l, j) = -tau(j) Σ_{l <= q < j} T(l, q) v_qᵀ v_j, from
// gram[q][j] = v_qᵀ v_j (q < j; read by every lane at once). T goes to `out` row-major, w x w.
template <class T>
__device__ void write_t(const T (*gram)[kPanel + 1], const T* taus, int w, T* out) {
  const int lane = threadIdx.x & 31;
  T t_row[kPanel];
#pragma unroll
  for (int q = 0; q < kPanel; ++q) t_row[q] = T(0);
#pragma unroll 1
  for (int j = 0; j < w; ++j) {
    T even = T(0), odd = T(0);  // two chains of additions, not one
#pragma unroll
    for (int q = 0; q < kPanel; q += 2) {
      if (q < j) even += t_row[q] * gram[q][j];
      if (q + 1 < j) odd += t_row[q + 1] * gram[q + 1][j];
    }
    const T value = lane < j ? -taus[j] * (even + odd) : lane == j ? taus[j] : T(0);
#pragma unroll
    for (int q = 0; q < kPanel; ++q) t_row[q] = q == j ? value : t_row[q];
  }
#pragma unroll
  for (int q = 0; q < kPanel; ++q) {
    if (lane < w && q < w) out[lane * w + q] = t_row[q];
  }
}

// Blocks over (matrix, tile of kTile columns from first_column): the tile's rows p..m multiplied by panel p's block
// reflector, (I - V Tᵀ Vᵀ) X for Qᵀ (transpose_t, Geqrf's update) or (I - V T Vᵀ) X for Q (Orgqr). A row of the tile
// per thread in registers, V's row beside it (its unit diagonal and the zeros above implied): W = Vᵀ X summed over the
// block, Y = op(T) W, X -= V Y. Columns below `identity_until` start as the identity's (Orgqr's columns not formed
// yet), their rows above p set to zero.
template <class T>
__global__ void __launch_bounds__(kMaxThreads)
    apply_block_reflector(const T* v_base, std::int64_t ldv, std::int64_t v_stride, const T* t_base,
                          std::int64_t t_stride, bool transpose_t, T* x_base, std::int64_t ldx, std::int64_t x_stride,
                          int m, int p, int w, int first_column, int end_column, int identity_until) {
  __shared__ T t_matrix[kPanel][kPanel + 1];
  __shared__ alignas(16) T products[kPanel * kTile];  // W = Vᵀ X, row l at [l * kTile]
  extern __shared__ double dynamic[];                 // sum_products's stage, then Y (row l at [l * kTile])
  T* stage = reinterpret_cast<T*>(dynamic);
  const int t = threadIdx.x, rows = m - p, i = p + t;
  const std::int64_t b = blockIdx.x;
  const T* v = v_base + b * v_stride;
  const T* t_panel = t_base + b * t_stride;
  T* x = x_base + b * x_stride;
  const int first = first_column + static_cast<int>(blockIdx.y) * kTile, columns = min(kTile, end_column - first);

  for (int e = t; e < kPanel * kPanel; e += blockDim.x) {
    const int l = e / kPanel, q = e % kPanel;
    t_matrix[l][q] = l < w && q < w ? t_panel[l * w + q] : T(0);
  }
  T v_row[kPanel], x_row[kTile];
#pragma unroll
  for (int l = 0; l < kPanel; ++l) v_row[l] = t < rows && l < w ? (t > l ? v[l * ldv + i] : T(t == l)) : T(0);
#pragma unroll
  for (int c = 0; c < kTile; ++c) {
    const int column = first + c;
    x_row[c] = t < rows && c < columns ? (column < identity_until ? T(i == column) : x[column * ldx + i]) : T(0);
  }
  sum_products(v_row, x_row, stage, products, kTile);
  // Y = op(T) W by up to four warps, a quarter of the columns each, lane l with row l of op(T) in registers.
  T* y = stage;
  const int lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
  if (warp < kTile / 4) {
    T op_row[kPanel];
#pragma unroll
    for (int q = 0; q < kPanel; ++q) op_row[q] = transpose_t ? t_matrix[q][lane] : t_matrix[lane][q];
    for (int quarter = warp; quarter < kTile / 4; quarter += warps) {
      T sums[4] = {};
#pragma unroll
      for (int q = 0; q < kPanel; ++q) {
        T w4[4];
        load4(products + q * kTile + quarter * 4, w4);
#pragma unroll
        for (int c = 0; c < 4; ++c) sums[c] += op_row[q] * w4[c];
      }
      store4(y + lane * kTile + quarter * 4, sums[0], sums[1], sums[2], sums[3]);
    }
  }
  __syncthreads();
  if (t < rows) {
#pragma unroll
    for (int l = 0; l < kPanel; ++l) {
#pragma unroll
      for (int c = 0; c < kTile; c += 4) {
        T ys[4];
        load4(y + l * kTile + c, ys);
#pragma unroll
        for (int k = 0; k < 4; ++k) x_row[c + k] -= v_row[l] * ys[k];
      }
    }
#pragma unroll
    for (int c = 0; c < kTile; ++c) {
      if (c < columns) x[(first + c) * ldx + i] = x_row[c];
    }
  }
  for (int r = t; r < p; r += blockDim.x) {
    for (int c = 0; c < columns && first + c < identity_until; ++c) x[(first + c) * ldx + r] = T(0);
  }
}

}  // namespace accel::solver::householder

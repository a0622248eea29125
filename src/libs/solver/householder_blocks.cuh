// The block reflectors of the Householder QR kernels (qr_kernel.cu): their shapes, loads and stores of four elements,
// a block's sums of V's rows times X's (VᵀX, by a small product per lane over rows staged in shared memory), T of a
// block reflector from its reflectors' products with each other (LAPACK's larft) and the kernel that multiplies
// columns by one (LAPACK's larfb). Device code, included by nvcc alone.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/chained_launch.cuh"
#include "libs/solver/four_elements.cuh"

namespace accel::solver::householder {

constexpr int kPanel = 32;        // reflectors made by one block at a time
constexpr int kTile = 4;          // columns a block of the update takes
constexpr int kMaxThreads = 256;  // a row per thread up to kSmallQrMaxRows
constexpr int kMaxWarps = kMaxThreads / 32;

inline __device__ float reciprocal(float x) { return __frcp_rn(x); }
inline __device__ double reciprocal(double x) { return __drcp_rn(x); }

// `N` consecutive elements of shared memory (1, or a multiple of 4 aligned to 16 bytes).
template <int N, class T>
__device__ void load_n(const T* p, T (&out)[N]) {
  if constexpr (N == 1) {
    out[0] = *p;
  } else {
    static_assert(N % 4 == 0, "load_n takes 1 or a multiple of 4");
#pragma unroll
    for (int c = 0; c < N; c += 4) {
      T four[4];
      load4(p + c, four);
#pragma unroll
      for (int e = 0; e < 4; ++e) out[c + e] = four[e];
    }
  }
}

// Elements between consecutive lanes' rows in shared memory where each lane stores a row of at least `width` by
// 16-byte stores: a row 16 bytes past a multiple of 128, so that the eight lanes of each quarter warp meet no bank
// twice (f64 rows staged by 8-byte stores 416 bytes apart met four-way conflicts, and 320 bytes apart eight-way).
template <class T>
__host__ __device__ constexpr int lane_row_pitch(int width) {
  int pitch = width;
  while ((pitch * static_cast<int>(sizeof(T))) % 128 != 16) ++pitch;
  return pitch;
}

// The dynamic shared memory sum_products<T, Columns> stages rows in: 32 rows per warp.
template <class T, int Columns = kTile>
__host__ __device__ constexpr int stage_pitch() {
  return lane_row_pitch<T>(kPanel + Columns);
}
template <class T, int Columns = kTile>
std::size_t stage_bytes(int threads) {
  return std::size_t(threads) * stage_pitch<T, Columns>() * sizeof(T);
}

// Σ over the block's rows of v[l] x[c] (l < kPanel, c < Columns) into out[l * pitch + c] in shared memory, by every
// thread. Each warp stages its 32 rows in `stage`, then each lane sums a 4 x Columns/4 block of the result over
// them (lane / 4 picks four of the l, lane % 4 a quarter of the c), where a reduction of each product across the
// warp took 2,500 instructions a warp. The warps' blocks are then summed over the block. Ends with the block in step,
// `stage` free.
template <int Columns, class T>
__device__ void sum_products(const T (&v)[kPanel], const T (&x)[Columns], T* stage, T* out, int pitch) {
  static_assert(Columns % 4 == 0, "rows are staged four elements at a time");
  constexpr int kPitch = stage_pitch<T, Columns>(), kLaneColumns = Columns / 4;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
  T* rows = stage + warp * 32 * kPitch;
  T* own = rows + lane * kPitch;
#pragma unroll
  for (int l = 0; l < kPanel; l += 4) store4(own + l, v[l], v[l + 1], v[l + 2], v[l + 3]);
#pragma unroll
  for (int c = 0; c < Columns; c += 4) store4(own + kPanel + c, x[c], x[c + 1], x[c + 2], x[c + 3]);
  __syncwarp();
  const int l0 = lane / 4 * 4, c0 = lane % 4 * kLaneColumns;
  T block[4][kLaneColumns] = {};
#pragma unroll 4
  for (int r = 0; r < 32; ++r) {
    T vs[4], xs[kLaneColumns];
    load4(rows + r * kPitch + l0, vs);
    load_n(rows + r * kPitch + kPanel + c0, xs);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int k = 0; k < kLaneColumns; ++k) block[i][k] += vs[i] * xs[k];
    }
  }
  __syncwarp();  // the warp's rows read before its block takes their place
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int k = 0; k < kLaneColumns; ++k) rows[(l0 + i) * Columns + c0 + k] = block[i][k];
  }
  __syncthreads();
  for (int e = t; e < kPanel * Columns; e += blockDim.x) {
    T total = stage[e];
    for (int q = 1; q < warps; ++q) total += stage[q * 32 * kPitch + e];
    out[e / Columns * pitch + e % Columns] = total;
  }
  __syncthreads();
}

// T of the block reflector H(0) … H(w-1) = I - V T Vᵀ (LAPACK's larft, forward and columnwise), by one warp: lane l
// makes row l, T(l, l) = tau(l) and T(l, j) = -tau(j) Σ_{l <= q < j} T(l, q) v_qᵀ v_j, from gram[q][j] = v_qᵀ v_j
// (q < j; read by every lane at once). Each T(l, q) is added into the sums of all later j as soon as it is known:
// independent multiply-adds, where a sum per j made a chain of them (write_t followed every panel of a Geqrf).
// `pending` shifts with q, pending[i] holding the sum for j = q + i. T goes to `out` row-major, w x w.
template <class T>
__device__ void write_t(const T (*gram)[kPanel + 1], const T* taus, int w, T* out) {
  const int lane = threadIdx.x & 31;
  T pending[kPanel] = {};
#pragma unroll 1
  for (int q = 0; q < w; ++q) {
    const T tau_q = taus[q];
    const T value = q < lane ? T(0) : q == lane ? tau_q : -tau_q * pending[0];
    if (lane < w) out[lane * w + q] = value;
#pragma unroll
    for (int i = 1; i < kPanel; ++i) pending[i - 1] = pending[i] + (q + i < kPanel ? value * gram[q][q + i] : T(0));
    pending[kPanel - 1] = T(0);
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
  follow_chain();
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
  sum_products<kTile>(v_row, x_row, stage, products, kTile);
  // Y = op(T) W by up to four warps, a quarter of the columns each, lane l with row l of op(T) in registers.
  constexpr int kYColumns = kTile / 4;
  T* y = stage;
  const int lane = t & 31, warp = t >> 5, warps = blockDim.x >> 5;
  if (warp < 4) {
    T op_row[kPanel];
#pragma unroll
    for (int q = 0; q < kPanel; ++q) op_row[q] = transpose_t ? t_matrix[q][lane] : t_matrix[lane][q];
    for (int quarter = warp; quarter < 4; quarter += warps) {
      const int c0 = quarter * kYColumns;
      T sums[kYColumns] = {};
#pragma unroll
      for (int q = 0; q < kPanel; ++q) {
        T w_part[kYColumns];
        load_n(products + q * kTile + c0, w_part);
#pragma unroll
        for (int c = 0; c < kYColumns; ++c) sums[c] += op_row[q] * w_part[c];
      }
#pragma unroll
      for (int c = 0; c < kYColumns; ++c) y[lane * kTile + c0 + c] = sums[c];
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

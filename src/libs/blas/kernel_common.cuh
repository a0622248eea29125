// What the BLAS kernels of this folder share: launch shapes, BLAS's vector indexing and a matrix-vector product's
// operands in the element type its kernels read. Included by the kernels' .cu files only (C++17, as nvcc compiles
// them).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "libs/blas/blas_kernels.hpp"

namespace accel::blas::kernels {

constexpr unsigned kThreads = 256;
// A grid-stride loop over this many blocks at most keeps every SM busy without a block per element.
constexpr std::int64_t kMaxBlocks = 4096;

inline unsigned blocks_for(std::int64_t items) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((items + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// Element i of a vector of increment inc and length n, as BLAS places it (a negative inc runs backwards).
__device__ inline std::int64_t vector_at(std::int64_t i, std::int64_t inc, std::int64_t n) {
  return inc > 0 ? i * inc : (n - 1 - i) * -inc;
}

// Axpy of contiguous 16-bit vectors, 16-byte aligned, as this thread of the grid takes it (launch_narrow_axpy and its
// chains): y = alpha x + y in f32, rounded once to T, 8 elements (16 bytes) a load, vector v by thread v of a
// grid-stride loop, and the elements past the last whole 8 one by one by the first threads.
template <class T>
__device__ inline T axpy_element(float alpha, T x, T y) {
  return static_cast<T>(fmaf(alpha, static_cast<float>(x), static_cast<float>(y)));
}

template <class T>
__device__ inline void axpy_contiguous(const T* x, T* y, std::int64_t n, float alpha) {
  constexpr std::int64_t kPer = sizeof(uint4) / sizeof(T);
  const std::int64_t vectors = n / kPer;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::int64_t v = first; v < vectors; v += step) {
    uint4 xs = reinterpret_cast<const uint4*>(x)[v];
    uint4 ys = reinterpret_cast<uint4*>(y)[v];
    const T* xe = reinterpret_cast<const T*>(&xs);
    T* ye = reinterpret_cast<T*>(&ys);
#pragma unroll
    for (int e = 0; e < kPer; ++e) ye[e] = axpy_element(alpha, xe[e], ye[e]);
    reinterpret_cast<uint4*>(y)[v] = ys;
  }
  const std::int64_t tail = vectors * kPer + first;
  if (tail < n) y[tail] = axpy_element(alpha, x[tail], y[tail]);
}

// A Ger's operands in its element type (launch_ger and its chains).
template <class T>
struct GerTyped {
  T* a;
  const T* x;
  const T* y;
  std::int64_t lda, stride_a, incx, stride_x, incy, stride_y, m, n, batch;
  T alpha;

  static GerTyped of(const GerLaunch& l) {
    return {static_cast<T*>(l.a),
            static_cast<const T*>(l.x),
            static_cast<const T*>(l.y),
            l.lda,
            l.stride_a,
            l.incx,
            l.stride_x,
            l.incy,
            l.stride_y,
            l.m,
            l.n,
            l.batch,
            static_cast<T>(l.alpha)};
  }
};

constexpr int kGerColumns = 4;  // columns of A a thread updates, its element of x read once for them

// Row `row` (< p.m) of member `member` of a Ger, columns J (kGerColumns of them) a thread, the grid striding over
// columns past its y extent. A thread's loads of y and of A are all issued before its first store (the compiler could
// not move a load past a store to A, which might alias y): a small update's time is one round trip to memory, not one
// per column.
template <class T>
__device__ inline void ger_member(const GerTyped<T>& p, std::int64_t row, std::int64_t member) {
  const T alpha_x = p.alpha * p.x[member * p.stride_x + vector_at(row, p.incx, p.m)];
  const T* y = p.y + member * p.stride_y;
  T* a = p.a + member * p.stride_a + row;
  for (std::int64_t first = blockIdx.y * kGerColumns; first < p.n; first += gridDim.y * kGerColumns) {
    T y_values[kGerColumns], a_values[kGerColumns];
#pragma unroll
    for (int c = 0; c < kGerColumns; ++c)
      if (first + c < p.n) y_values[c] = y[vector_at(first + c, p.incy, p.n)];
#pragma unroll
    for (int c = 0; c < kGerColumns; ++c)
      if (first + c < p.n) a_values[c] = a[(first + c) * p.lda];
#pragma unroll
    for (int c = 0; c < kGerColumns; ++c)
      if (first + c < p.n) a[(first + c) * p.lda] = a_values[c] + alpha_x * y_values[c];
  }
}

// The sum of a warp's 32 values, in lane 0 (the other lanes hold partial sums).
template <class T>
__device__ inline T warp_sum_to_first_lane(T value) {
  for (int delta = 16; delta > 0; delta /= 2) value += __shfl_down_sync(0xffffffffu, value, delta);
  return value;
}

// Whether element (i, j) of a tile on the diagonal lies in the stored triangle.
__device__ inline bool stored(bool lower, int i, int j) { return lower ? i >= j : i <= j; }

// A MatrixVectorLaunch's operands in the element type T its kernels read, and its scalars in the type C they compute
// in (f32 for 16-bit elements, as cuBLAS's HSH and TST routines).
template <class T, class C = T>
struct MatrixVectorTyped {
  std::int64_t lda, stride_a, incx, stride_x, incy, stride_y;
  const T* a;
  const T* x;
  T* y;
  C alpha, beta;

  static MatrixVectorTyped of(const MatrixVectorLaunch& l) {
    return {.lda = l.lda,
            .stride_a = l.stride_a,
            .incx = l.incx,
            .stride_x = l.stride_x,
            .incy = l.incy,
            .stride_y = l.stride_y,
            .a = static_cast<const T*>(l.a),
            .x = static_cast<const T*>(l.x),
            .y = static_cast<T*>(l.y),
            .alpha = static_cast<C>(l.alpha),
            .beta = static_cast<C>(l.beta)};
  }
};

}  // namespace accel::blas::kernels

// Kernels for Swap, for Axpy, Asum and Dot of 16-bit vectors and for the whole matrix a stored triangle stands for
// (src/libs/blas/blas_kernels.hpp), launched chained (core/chained_launch.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "core/chained_launch.cuh"
#include "libs/blas/kernel_common.cuh"

namespace accel::blas {
namespace {

using namespace kernels;

// -- Swap ---------------------------------------------------------------------------------------------------------

// Vec is 16 bytes of T where both vectors are 16-byte aligned (the elements past the last whole Vec go one by one),
// else T itself.
template <class T, class Vec>
__global__ void swap_kernel(T* x, T* y, std::int64_t n) {
  wait_for_prior_kernel();
  constexpr std::int64_t kPer = sizeof(Vec) / sizeof(T);
  const std::int64_t vectors = n / kPer;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  Vec* xv = reinterpret_cast<Vec*>(x);
  Vec* yv = reinterpret_cast<Vec*>(y);
  for (std::int64_t v = first; v < vectors; v += step) {
    const Vec a = xv[v], b = yv[v];
    xv[v] = b;
    yv[v] = a;
  }
  const std::int64_t tail = vectors * kPer + first;
  if (tail < n) {
    const T a = x[tail];
    x[tail] = y[tail];
    y[tail] = a;
  }
}

template <class T, class Vec>
cudaError_t swap(void* x, void* y, std::int64_t n, cudaStream_t stream) {
  T* xt = static_cast<T*>(x);
  T* yt = static_cast<T*>(y);
  const bool aligned = (reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(y)) % 16 == 0;
  if (aligned)
    return launch_chained(swap_kernel<T, Vec>, dim3(blocks_for(n / (sizeof(Vec) / sizeof(T)))), dim3(kThreads), 0,
                          stream, xt, yt, n);
  return launch_chained(swap_kernel<T, T>, dim3(blocks_for(n)), dim3(kThreads), 0, stream, xt, yt, n);
}

// -- Axpy of 16-bit vectors ---------------------------------------------------------------------------------------

// y = alpha x + y (axpy_element): contiguous vectors 16 bytes a load (axpy_contiguous), any others one by one.
template <class T>
__global__ void axpy_contiguous_kernel(const T* x, T* y, std::int64_t n, float alpha) {
  wait_for_prior_kernel();
  axpy_contiguous(x, y, n, alpha);
}

template <class T>
__global__ void axpy_strided_kernel(const T* x, std::int64_t incx, T* y, std::int64_t incy, std::int64_t n,
                                    float alpha) {
  wait_for_prior_kernel();
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    T& out = y[vector_at(i, incy, n)];
    out = axpy_element(alpha, x[vector_at(i, incx, n)], out);
  }
}

template <class T>
cudaError_t axpy(const void* x, std::int64_t incx, void* y, std::int64_t incy, std::int64_t n, float alpha,
                 cudaStream_t stream) {
  const T* xt = static_cast<const T*>(x);
  T* yt = static_cast<T*>(y);
  const bool aligned = (reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(y)) % 16 == 0;
  if (incx == 1 && incy == 1 && aligned)
    return launch_chained(axpy_contiguous_kernel<T>, dim3(blocks_for(n / (sizeof(uint4) / sizeof(T)))), dim3(kThreads),
                          0, stream, xt, yt, n, alpha);
  return launch_chained(axpy_strided_kernel<T>, dim3(blocks_for(n)), dim3(kThreads), 0, stream, xt, incx, yt, incy, n,
                        alpha);
}

// -- Asum and Dot of 16-bit vectors ------------------------------------------------------------------------------

constexpr unsigned kSumThreads = 1024;
// Elements a block takes, fewest: a vector of up to 65,536 is summed by one block in one launch, where a second
// launch to add blocks' sums would cost the request more host time than the block's reads (PERFORMANCE.md §97).
constexpr std::int64_t kSumPerBlock = std::int64_t{64} * kSumThreads;
constexpr std::int64_t kSumMostBlocks = 256;  // two blocks of 1,024 threads on each of an H100's or H200's SMs, about

std::int64_t sum_blocks(std::int64_t n) {
  return std::clamp<std::int64_t>((n + kSumPerBlock - 1) / kSumPerBlock, 1, kSumMostBlocks);
}

// The sum of the block's values, in thread 0, added in a fixed order.
__device__ float block_sum(float value) {
  __shared__ float warp_sums[kSumThreads / 32];
  value = warp_sum_to_first_lane(value);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = value;
  __syncthreads();
  return threadIdx.x < 32 ? warp_sum_to_first_lane(warp_sums[threadIdx.x]) : 0.0f;
}

// The terms of the two sums, in f32: |x_i| (Asum, which reads no y) and x_i y_i (Dot).
struct Magnitude {
  template <class T>
  __device__ static float term(T x, T) {
    return fabsf(static_cast<float>(x));
  }
};
struct Product {
  template <class T>
  __device__ static float term(T x, T y) {
    return static_cast<float>(x) * static_cast<float>(y);
  }
};

// A sum's operands: y is read only by a Term that uses it.
template <class T>
struct SumOperands {
  const T* x;
  std::int64_t incx;
  const T* y;
  std::int64_t incy;
  std::int64_t n;
  bool by_vectors;  // x (and y) contiguous and 16-byte aligned
  T* result;
  float* partial;  // a float a block, where there are several
};

// Each thread sums its terms in f32 (a grid-stride loop, four sums in flight; 16 bytes a load where the vectors are
// contiguous and aligned), the block adds its threads' sums in a fixed order; one block rounds its total to T once,
// several each leave theirs in `partial` for sum_finish.
template <class T, class Term>
__global__ void __launch_bounds__(kSumThreads) sum_kernel(SumOperands<T> s) {
  wait_for_prior_kernel();
  constexpr bool kReadsY = std::is_same_v<Term, Product>;
  float sums[4] = {};
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kSumThreads + threadIdx.x;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kSumThreads;
  std::int64_t done = 0;  // elements summed as vectors
  if (s.by_vectors) {
    constexpr int kPer = sizeof(uint4) / sizeof(T);
    const std::int64_t vectors = s.n / kPer;
#pragma unroll 4
    for (std::int64_t v = first; v < vectors; v += step) {
      const uint4 xs = reinterpret_cast<const uint4*>(s.x)[v];
      const uint4 ys = kReadsY ? reinterpret_cast<const uint4*>(s.y)[v] : xs;
      const T* xe = reinterpret_cast<const T*>(&xs);
      const T* ye = reinterpret_cast<const T*>(&ys);
#pragma unroll
      for (int e = 0; e < kPer; ++e) sums[e % 4] += Term::term(xe[e], ye[e]);
    }
    done = vectors * kPer;
  }
  const auto at = [&](std::int64_t i) {
    const T x = s.x[vector_at(i, s.incx, s.n)];
    return Term::term(x, kReadsY ? s.y[vector_at(i, s.incy, s.n)] : x);
  };
  std::int64_t i = done + first;
  for (; i + 3 * step < s.n; i += 4 * step) {
#pragma unroll
    for (int k = 0; k < 4; ++k) sums[k] += at(i + k * step);
  }
  for (; i < s.n; i += step) sums[0] += at(i);
  const float sum = block_sum((sums[0] + sums[1]) + (sums[2] + sums[3]));
  if (threadIdx.x != 0) return;
  if (gridDim.x == 1)
    *s.result = static_cast<T>(sum);
  else
    s.partial[blockIdx.x] = sum;
}

// The blocks' sums added in block order, rounded to T once.
template <class T>
__global__ void __launch_bounds__(kSumThreads) sum_finish(const float* partial, std::int64_t blocks, T* result) {
  wait_for_prior_kernel();
  const float sum = block_sum(threadIdx.x < blocks ? partial[threadIdx.x] : 0.0f);
  if (threadIdx.x == 0) *result = static_cast<T>(sum);
}

template <class T, class Term>
cudaError_t narrow_sum(const void* x, std::int64_t incx, const void* y, std::int64_t incy, std::int64_t n, void* result,
                       void* workspace, cudaStream_t stream) {
  const std::int64_t blocks = sum_blocks(n);
  if (blocks > 1 && workspace == nullptr) return cudaErrorInvalidValue;
  const bool contiguous = incx == 1 && (y == nullptr || incy == 1);
  const bool aligned = (reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(y)) % 16 == 0;
  const SumOperands<T> s{static_cast<const T*>(x),
                         incx,
                         static_cast<const T*>(y),
                         incy,
                         n,
                         contiguous && aligned,
                         static_cast<T*>(result),
                         static_cast<float*>(workspace)};
  if (cudaError_t launched =
          launch_chained(sum_kernel<T, Term>, dim3(static_cast<unsigned>(blocks)), dim3(kSumThreads), 0, stream, s);
      launched != cudaSuccess || blocks == 1)
    return launched;
  return launch_chained(sum_finish<T>, dim3(1), dim3(kSumThreads), 0, stream, static_cast<const float*>(s.partial),
                        blocks, s.result);
}

// -- Whole matrices -------------------------------------------------------------------------------------------------

constexpr int kSide = 32;
constexpr int kRowsPerPass = kThreads / kSide;

// Block (I, J): tile (I, J) of the whole matrix. It reads tile (I, J) of a where that tile holds stored elements, else
// tile (J, I) (for a symmetric matrix only), coalesced either way, then writes each element from the stored one of
// (i, j) and (j, i), or zero, or one on a unit diagonal.
template <class T>
__global__ void __launch_bounds__(kThreads)
    whole_kernel(const T* a, std::int64_t lda, std::int64_t order, bool lower, StoredTriangle form, T* whole) {
  wait_for_prior_kernel();
  __shared__ T tile[kSide][kSide + 1];
  const int bi = blockIdx.x, bj = blockIdx.y;
  const bool stored_side = lower ? bi >= bj : bi <= bj;
  const bool mirrored = form == StoredTriangle::symmetric;
  const int src_i = stored_side ? bi : bj, src_j = stored_side ? bj : bi;
  const int lane = threadIdx.x % kSide, pass = threadIdx.x / kSide;
  if (stored_side || mirrored) {
    for (int r = pass; r < kSide; r += kRowsPerPass) {
      const std::int64_t i = static_cast<std::int64_t>(src_i) * kSide + lane;
      const std::int64_t j = static_cast<std::int64_t>(src_j) * kSide + r;
      const bool inside = i < order && j < order && (lower ? i >= j : i <= j);
      tile[lane][r] = inside ? a[i + j * lda] : T(0);
    }
  }
  __syncthreads();
  for (int r = pass; r < kSide; r += kRowsPerPass) {
    const std::int64_t i = static_cast<std::int64_t>(bi) * kSide + lane;
    const std::int64_t j = static_cast<std::int64_t>(bj) * kSide + r;
    if (i >= order || j >= order) continue;
    T value;
    if (i == j && form == StoredTriangle::unit_triangular) {
      value = T(1);
    } else if (lower ? i >= j : i <= j) {
      value = tile[lane][r];
    } else {
      value = mirrored ? tile[r][lane] : T(0);
    }
    whole[i + j * order] = value;
  }
}

template <class T>
cudaError_t whole(const void* a, std::int64_t lda, std::int64_t order, bool lower, StoredTriangle form, void* out,
                  cudaStream_t stream) {
  const std::int64_t tiles = (order + kSide - 1) / kSide;
  if (tiles > kMaxGridExtent) return cudaErrorInvalidValue;
  const auto grid = static_cast<unsigned>(tiles);
  return launch_chained(whole_kernel<T>, dim3(grid, grid), dim3(kThreads), 0, stream, static_cast<const T*>(a), lda,
                        order, lower, form, static_cast<T*>(out));
}

}  // namespace

cudaError_t launch_swap(void* x, void* y, std::int64_t n, bool f64, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return f64 ? swap<double, double2>(x, y, n, stream) : swap<float, float4>(x, y, n, stream);
}

cudaError_t launch_narrow_axpy(const void* x, std::int64_t incx, void* y, std::int64_t incy, std::int64_t n,
                               float alpha, bool bf16, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return bf16 ? axpy<__nv_bfloat16>(x, incx, y, incy, n, alpha, stream)
              : axpy<__half>(x, incx, y, incy, n, alpha, stream);
}

std::uint64_t narrow_sum_workspace_bytes(std::int64_t n) {
  const std::int64_t blocks = sum_blocks(n);
  return blocks == 1 ? 0 : static_cast<std::uint64_t>(blocks) * sizeof(float);
}

cudaError_t launch_narrow_asum(const void* x, std::int64_t n, std::int64_t incx, bool bf16, void* result,
                               void* workspace, cudaStream_t stream) {
  return bf16 ? narrow_sum<__nv_bfloat16, Magnitude>(x, incx, nullptr, 0, n, result, workspace, stream)
              : narrow_sum<__half, Magnitude>(x, incx, nullptr, 0, n, result, workspace, stream);
}

cudaError_t launch_narrow_dot(const void* x, std::int64_t incx, const void* y, std::int64_t incy, std::int64_t n,
                              bool bf16, void* result, void* workspace, cudaStream_t stream) {
  return bf16 ? narrow_sum<__nv_bfloat16, Product>(x, incx, y, incy, n, result, workspace, stream)
              : narrow_sum<__half, Product>(x, incx, y, incy, n, result, workspace, stream);
}

cudaError_t launch_whole_matrix(const void* a, std::int64_t lda, std::int64_t order, bool lower, StoredTriangle form,
                                bool f64, void* whole_matrix, cudaStream_t stream) {
  if (order == 0) return cudaSuccess;
  return f64 ? whole<double>(a, lda, order, lower, form, whole_matrix, stream)
             : whole<float>(a, lda, order, lower, form, whole_matrix, stream);
}

}  // namespace accel::blas

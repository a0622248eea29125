// Kernels for Swap and for the whole matrix a stored triangle stands for (src/libs/blas/blas_kernels.hpp), launched
// chained (core/chained_launch.cuh).
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

cudaError_t launch_whole_matrix(const void* a, std::int64_t lda, std::int64_t order, bool lower, StoredTriangle form,
                                bool f64, void* whole_matrix, cudaStream_t stream) {
  if (order == 0) return cudaSuccess;
  return f64 ? whole<double>(a, lda, order, lower, form, whole_matrix, stream)
             : whole<float>(a, lda, order, lower, form, whole_matrix, stream);
}

}  // namespace accel::blas

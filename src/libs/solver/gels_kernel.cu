#include <algorithm>
#include <climits>

#include <cuComplex.h>

#include "libs/solver/gels_kernel.hpp"

namespace accel::solver {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;  // grid-stride beyond this

// An element exactly zero, both parts of a complex one.
__device__ bool is_zero(float x) { return x == 0.0f; }
__device__ bool is_zero(double x) { return x == 0.0; }
__device__ bool is_zero(cuComplex x) { return x.x == 0.0f && x.y == 0.0f; }
__device__ bool is_zero(cuDoubleComplex x) { return x.x == 0.0 && x.y == 0.0; }

template <class T>
__global__ void copy_triangle(const T* a, std::int64_t lda, std::int64_t n, T* r, std::int32_t* ipiv) {
  const std::int64_t count = n * n;
  for (std::int64_t e = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; e < count;
       e += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t j = e / n, i = e - j * n;
    r[e] = i <= j ? a[j * lda + i] : T{};
    if (e < n) ipiv[e] = static_cast<std::int32_t>(e + 1);
  }
}

// One block: the first exact zero of the diagonal, as LAPACK's trtrs finds it.
template <class T>
__global__ void first_zero_diagonal(const T* a, std::int64_t lda, std::int64_t n, std::int32_t* info) {
  __shared__ int first;
  if (threadIdx.x == 0) first = INT_MAX;
  __syncthreads();
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    if (is_zero(a[i * lda + i])) atomicMin(&first, static_cast<int>(i + 1));
  }
  __syncthreads();
  if (threadIdx.x == 0) *info = first == INT_MAX ? 0 : first;
}

}  // namespace

template <class T>
cudaError_t launch_triangle_for_getrs(const T* a, std::int64_t lda, std::int64_t n, T* r, std::int32_t* ipiv,
                                      std::int32_t* info, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((n * n + kThreads - 1) / kThreads, 1, kMaxBlocks));
  copy_triangle<T><<<blocks, kThreads, 0, stream>>>(a, lda, n, r, ipiv);
  if (cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;
  first_zero_diagonal<T><<<1, kThreads, 0, stream>>>(a, lda, n, info);
  return cudaGetLastError();
}

template cudaError_t launch_triangle_for_getrs<float>(const float*, std::int64_t, std::int64_t, float*, std::int32_t*,
                                                      std::int32_t*, cudaStream_t);
template cudaError_t launch_triangle_for_getrs<double>(const double*, std::int64_t, std::int64_t, double*,
                                                       std::int32_t*, std::int32_t*, cudaStream_t);
template cudaError_t launch_triangle_for_getrs<cuComplex>(const cuComplex*, std::int64_t, std::int64_t, cuComplex*,
                                                          std::int32_t*, std::int32_t*, cudaStream_t);
template cudaError_t launch_triangle_for_getrs<cuDoubleComplex>(const cuDoubleComplex*, std::int64_t, std::int64_t,
                                                                cuDoubleComplex*, std::int32_t*, std::int32_t*,
                                                                cudaStream_t);

}  // namespace accel::solver

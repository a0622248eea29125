// What least squares needs on a CUDA stream between cuSOLVER's routines (gels_operation_cuda.cpp solves R X = Qᵀ B
// with getrs, since cuSOLVER has no triangular solve of its own and cuBLAS is not linked): R, the upper triangle of
// the n x n top of a Geqrf's A, copied into a matrix of its own with zeros below the diagonal, and identity pivots, so
// that getrs's unit lower solve leaves B as it is and its upper solve is R's; and LAPACK's gels info, the first i
// (1-based) with R(i,i) exactly zero, or 0. Compiled as C++17 by nvcc, so this header includes nothing of C++20.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace accel::solver {

// Enqueues the copy of R (column-major in `a`, leading dimension lda) into the packed n x n `r`, the n pivots 1..n
// into `ipiv`, and R's rank check into `*info`; the launches' error, if any. T is float, double, cuComplex or
// cuDoubleComplex.
template <class T>
[[nodiscard]] cudaError_t launch_triangle_for_getrs(const T* a, std::int64_t lda, std::int64_t n, T* r,
                                                    std::int32_t* ipiv, std::int32_t* info, cudaStream_t stream);

}  // namespace accel::solver

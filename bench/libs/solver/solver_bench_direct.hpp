// The raw cuSOLVER calls solver_bench.cpp measures accel against, one shape at a time as a user would write them,
// and the routines' names that both sides print.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/format.h>

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "common/cuda_checks.hpp"
#include "common/exit_now.hpp"

namespace solver_bench {

using accel::bench::check_cuda;
inline void check_solver(cusolverStatus_t s, const char* what) {
  accel::bench::check_library(s, CUSOLVER_STATUS_SUCCESS, "cuSOLVER", what);
}
inline void check_blas(cublasStatus_t s, const char* what) {
  accel::bench::check_library(s, CUBLAS_STATUS_SUCCESS, "cuBLAS", what);
}

// qr is geqrf then orgqr (Q and R, as torch.linalg.qr); gesvd and gesvdj the thin U, S and Vᵀ or V (as
// torch.linalg.svd with full_matrices=False).
enum class Routine { getrf, potrf, syevd, qr, ormqr, gels, gesvd, gesvdj };

inline const char* name(Routine r) {
  switch (r) {
    case Routine::getrf: return "getrf";
    case Routine::potrf: return "potrf";
    case Routine::syevd: return "syevd";
    case Routine::qr: return "geqrf+orgqr";
    case Routine::ormqr: return "ormqr";
    case Routine::gels: return "gels";
    case Routine::gesvd: return "gesvd";
    case Routine::gesvdj: return "gesvdj";
  }
  return "?";
}

// The raw library calls, as a user would write them for one shape.
template <class T>
struct Direct {
  static constexpr bool kF64 = std::is_same_v<T, double>;
  Routine routine;
  int n;
  int batch;
  cudaStream_t stream{};
  cusolverDnHandle_t handle{};
  cublasHandle_t blas{};  // a batched getrf's: cuSOLVER has none
  T *a{}, *pristine{}, *work{}, *w{}, *u{}, *vt{}, *rwork{};
  int *ipiv{}, *info{}, *host_info{};
  T** matrices{};  // potrfBatched's and getrfBatched's array of addresses
  gesvdjInfo_t params{};
  int lwork = 0;
  std::size_t gels_bytes = 0;  // <t><t>gels's workspace, in bytes

  // gels: A is the first n/2 columns of the input, B its last column (in u); X goes to vt.
  int columns() const { return routine == Routine::gels ? n / 2 : n; }

  Direct(Routine r, const std::vector<T>& host, int size, int count) : routine(r), n(size), batch(count) {
    const std::size_t bytes = host.size() * sizeof(T);
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check_solver(cusolverDnCreate(&handle), "cusolverDnCreate");
    check_solver(cusolverDnSetStream(handle, stream), "cusolverDnSetStream");
    check_cuda(cudaMalloc(&a, bytes), "a");
    check_cuda(cudaMalloc(&pristine, bytes), "pristine");
    check_cuda(cudaMalloc(&w, std::size_t(batch) * n * sizeof(T)), "w");
    check_cuda(cudaMalloc(&u, bytes), "u");
    check_cuda(cudaMalloc(&vt, bytes), "vt");
    check_cuda(cudaMalloc(&rwork, n * sizeof(T)), "rwork");
    check_cuda(cudaMalloc(&ipiv, std::size_t(batch) * n * sizeof(int)), "ipiv");
    check_cuda(cudaMalloc(&info, batch * sizeof(int)), "info");
    check_cuda(cudaMallocHost(&host_info, batch * sizeof(int)), "host info");
    check_cuda(cudaMemcpy(pristine, host.data(), bytes, cudaMemcpyHostToDevice), "upload");
    std::vector<T*> addresses;
    for (int i = 0; i < batch; ++i) addresses.push_back(a + static_cast<std::size_t>(i) * n * n);
    check_cuda(cudaMalloc(&matrices, batch * sizeof(T*)), "matrices");
    check_cuda(cudaMemcpy(matrices, addresses.data(), batch * sizeof(T*), cudaMemcpyHostToDevice), "addresses");
    if (routine == Routine::getrf && batch > 1) {
      check_blas(cublasCreate(&blas), "cublasCreate");
      check_blas(cublasSetStream(blas, stream), "cublasSetStream");
    }
    if (routine == Routine::getrf) {
      check_solver(kF64 ? cusolverDnDgetrf_bufferSize(handle, n, n, reinterpret_cast<double*>(a), n, &lwork)
                        : cusolverDnSgetrf_bufferSize(handle, n, n, reinterpret_cast<float*>(a), n, &lwork),
                   "getrf_bufferSize");
    } else if (routine == Routine::potrf) {
      check_solver(
          kF64 ? cusolverDnDpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<double*>(a), n, &lwork)
               : cusolverDnSpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<float*>(a), n, &lwork),
          "potrf_bufferSize");
    } else if (routine == Routine::qr) {
      int orgqr_lwork = 0;
      if constexpr (kF64) {
        check_solver(cusolverDnDgeqrf_bufferSize(handle, n, n, a, n, &lwork), "geqrf_bufferSize");
        check_solver(cusolverDnDorgqr_bufferSize(handle, n, n, n, a, n, w, &orgqr_lwork), "orgqr_bufferSize");
      } else {
        check_solver(cusolverDnSgeqrf_bufferSize(handle, n, n, a, n, &lwork), "geqrf_bufferSize");
        check_solver(cusolverDnSorgqr_bufferSize(handle, n, n, n, a, n, w, &orgqr_lwork), "orgqr_bufferSize");
      }
      lwork = std::max(lwork, orgqr_lwork);
    } else if (routine == Routine::ormqr) {  // A factored here once: the calls apply its Qᵀ to fresh copies of C
      check_cuda(cudaMemcpy(a, pristine, bytes, cudaMemcpyDeviceToDevice), "a");
      int geqrf_lwork = 0;
      if constexpr (kF64) {
        check_solver(cusolverDnDgeqrf_bufferSize(handle, n, n, a, n, &geqrf_lwork), "geqrf_bufferSize");
        check_solver(cusolverDnDormqr_bufferSize(handle, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, n, n, n, a, n, w, u, n, &lwork),
                     "ormqr_bufferSize");
      } else {
        check_solver(cusolverDnSgeqrf_bufferSize(handle, n, n, a, n, &geqrf_lwork), "geqrf_bufferSize");
        check_solver(cusolverDnSormqr_bufferSize(handle, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, n, n, n, a, n, w, u, n, &lwork),
                     "ormqr_bufferSize");
      }
      check_cuda(cudaMalloc(&work, std::max({lwork, geqrf_lwork, 1}) * sizeof(T)), "work");
      if constexpr (kF64) {
        check_solver(cusolverDnDgeqrf(handle, n, n, a, n, w, work, geqrf_lwork, info), "geqrf");
      } else {
        check_solver(cusolverDnSgeqrf(handle, n, n, a, n, w, work, geqrf_lwork, info), "geqrf");
      }
      check_cuda(cudaStreamSynchronize(stream), "geqrf");
      return;
    } else if (routine == Routine::gels) {
      if constexpr (kF64) {
        check_solver(
            cusolverDnDDgels_bufferSize(handle, n, columns(), 1, a, n, u, n, vt, columns(), nullptr, &gels_bytes),
            "gels_bufferSize");
      } else {
        check_solver(
            cusolverDnSSgels_bufferSize(handle, n, columns(), 1, a, n, u, n, vt, columns(), nullptr, &gels_bytes),
            "gels_bufferSize");
      }
      lwork = static_cast<int>((gels_bytes + sizeof(T) - 1) / sizeof(T));
    } else if (routine == Routine::gesvdj) {
      const auto jobz = CUSOLVER_EIG_MODE_VECTOR;
      check_solver(cusolverDnCreateGesvdjInfo(&params), "cusolverDnCreateGesvdjInfo");
      if constexpr (kF64) {
        check_solver(
            batch > 1
                ? cusolverDnDgesvdjBatched_bufferSize(handle, jobz, n, n, a, n, w, u, n, vt, n, &lwork, params, batch)
                : cusolverDnDgesvdj_bufferSize(handle, jobz, 1, n, n, a, n, w, u, n, vt, n, &lwork, params),
            "gesvdj_bufferSize");
      } else {
        check_solver(
            batch > 1
                ? cusolverDnSgesvdjBatched_bufferSize(handle, jobz, n, n, a, n, w, u, n, vt, n, &lwork, params, batch)
                : cusolverDnSgesvdj_bufferSize(handle, jobz, 1, n, n, a, n, w, u, n, vt, n, &lwork, params),
            "gesvdj_bufferSize");
      }
    } else if (routine == Routine::gesvd) {
      check_solver(
          kF64 ? cusolverDnDgesvd_bufferSize(handle, n, n, &lwork) : cusolverDnSgesvd_bufferSize(handle, n, n, &lwork),
          "gesvd_bufferSize");
    } else {
      check_solver(
          kF64 ? cusolverDnDsyevd_bufferSize(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n,
                                             reinterpret_cast<double*>(a), n, reinterpret_cast<double*>(w), &lwork)
               : cusolverDnSsyevd_bufferSize(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n,
                                             reinterpret_cast<float*>(a), n, reinterpret_cast<float*>(w), &lwork),
          "syevd_bufferSize");
    }
    check_cuda(cudaMalloc(&work, std::max(lwork, 1) * sizeof(T)), "work");
  }
  ~Direct() {
    cudaStreamSynchronize(stream);
    cusolverDnDestroy(handle);
    if (blas != nullptr) cublasDestroy(blas);
    if (params != nullptr) cusolverDnDestroyGesvdjInfo(params);
    for (void* p : {static_cast<void*>(a), static_cast<void*>(pristine), static_cast<void*>(work),
                    static_cast<void*>(w), static_cast<void*>(u), static_cast<void*>(vt), static_cast<void*>(rwork),
                    static_cast<void*>(ipiv), static_cast<void*>(info), static_cast<void*>(matrices)})
      cudaFree(p);
    cudaFreeHost(host_info);
    cudaStreamDestroy(stream);
  }
  [[nodiscard]] const char* variant() const {
    if (batch == 1) return "cusolver";
    if (routine == Routine::qr) return "cusolver_loop";
    return routine == Routine::getrf ? "cublas_batched" : "cusolver_batched";
  }
  void restore() {
    const std::size_t elements = std::size_t(batch) * n * n;
    check_cuda(cudaMemcpyAsync(routine == Routine::ormqr ? u : a, pristine, elements * sizeof(T),
                               cudaMemcpyDeviceToDevice, stream),
               "restore");
    if (routine == Routine::gels) {
      check_cuda(
          cudaMemcpyAsync(u, pristine + std::size_t(n) * (n - 1), n * sizeof(T), cudaMemcpyDeviceToDevice, stream),
          "restore b");
    }
    check_cuda(cudaStreamSynchronize(stream), "sync");
  }
  void call() {
    const auto jobz = CUSOLVER_EIG_MODE_VECTOR;
    int iterations = 0;  // gels's
    if (routine == Routine::ormqr) {
      if constexpr (kF64) {
        check_solver(cusolverDnDormqr(handle, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, n, n, n, a, n, w, u, n, work, lwork, info),
                     "ormqr");
      } else {
        check_solver(cusolverDnSormqr(handle, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, n, n, n, a, n, w, u, n, work, lwork, info),
                     "ormqr");
      }
    } else if (routine == Routine::gels) {
      if constexpr (kF64) {
        check_solver(
            cusolverDnDDgels(handle, n, columns(), 1, a, n, u, n, vt, columns(), work, gels_bytes, &iterations, info),
            "gels");
      } else {
        check_solver(
            cusolverDnSSgels(handle, n, columns(), 1, a, n, u, n, vt, columns(), work, gels_bytes, &iterations, info),
            "gels");
      }
    } else if (routine == Routine::gesvdj) {
      if constexpr (kF64) {
        check_solver(
            batch > 1
                ? cusolverDnDgesvdjBatched(handle, jobz, n, n, a, n, w, u, n, vt, n, work, lwork, info, params, batch)
                : cusolverDnDgesvdj(handle, jobz, 1, n, n, a, n, w, u, n, vt, n, work, lwork, info, params),
            "gesvdj");
      } else {
        check_solver(
            batch > 1
                ? cusolverDnSgesvdjBatched(handle, jobz, n, n, a, n, w, u, n, vt, n, work, lwork, info, params, batch)
                : cusolverDnSgesvdj(handle, jobz, 1, n, n, a, n, w, u, n, vt, n, work, lwork, info, params),
            "gesvdj");
      }
    } else if (routine == Routine::qr) {  // cuSOLVER has no batched QR: a batch is a loop, as PyTorch's
      for (int i = 0; i < batch; ++i) {
        T* matrix = a + std::size_t(i) * n * n;
        T* scalars = w + std::size_t(i) * n;
        if constexpr (kF64) {
          check_solver(cusolverDnDgeqrf(handle, n, n, matrix, n, scalars, work, lwork, info + i), "geqrf");
          check_solver(cusolverDnDorgqr(handle, n, n, n, matrix, n, scalars, work, lwork, info + i), "orgqr");
        } else {
          check_solver(cusolverDnSgeqrf(handle, n, n, matrix, n, scalars, work, lwork, info + i), "geqrf");
          check_solver(cusolverDnSorgqr(handle, n, n, n, matrix, n, scalars, work, lwork, info + i), "orgqr");
        }
      }
    } else if (batch > 1 && routine == Routine::getrf) {
      if constexpr (kF64) {
        check_blas(cublasDgetrfBatched(blas, n, matrices, n, ipiv, info, batch), "getrfBatched");
      } else {
        check_blas(cublasSgetrfBatched(blas, n, matrices, n, ipiv, info, batch), "getrfBatched");
      }
    } else if (batch > 1) {
      if constexpr (kF64) {
        check_solver(cusolverDnDpotrfBatched(handle, CUBLAS_FILL_MODE_LOWER, n, matrices, n, info, batch),
                     "potrfBatched");
      } else {
        check_solver(cusolverDnSpotrfBatched(handle, CUBLAS_FILL_MODE_LOWER, n, matrices, n, info, batch),
                     "potrfBatched");
      }
    } else if constexpr (kF64) {
      if (routine == Routine::getrf) check_solver(cusolverDnDgetrf(handle, n, n, a, n, work, ipiv, info), "getrf");
      if (routine == Routine::potrf)
        check_solver(cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info), "potrf");
      if (routine == Routine::syevd)
        check_solver(
            cusolverDnDsyevd(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w, work, lwork, info),
            "syevd");
      if (routine == Routine::gesvd)
        check_solver(cusolverDnDgesvd(handle, 'S', 'S', n, n, a, n, w, u, n, vt, n, work, lwork, rwork, info), "gesvd");
    } else {
      if (routine == Routine::getrf) check_solver(cusolverDnSgetrf(handle, n, n, a, n, work, ipiv, info), "getrf");
      if (routine == Routine::potrf)
        check_solver(cusolverDnSpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info), "potrf");
      if (routine == Routine::syevd)
        check_solver(
            cusolverDnSsyevd(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w, work, lwork, info),
            "syevd");
      if (routine == Routine::gesvd)
        check_solver(cusolverDnSgesvd(handle, 'S', 'S', n, n, a, n, w, u, n, vt, n, work, lwork, rwork, info), "gesvd");
    }
    check_cuda(cudaMemcpyAsync(host_info, info, batch * sizeof(int), cudaMemcpyDeviceToHost, stream), "info");
    check_cuda(cudaStreamSynchronize(stream), "sync");
    for (int i = 0; i < batch; ++i) {
      if (host_info[i] != 0) {
        fmt::print(stderr, "{}: info {} of matrix {}\n", name(routine), host_info[i], i);
        accel::bench::exit_now(1);
      }
    }
  }
};

// getrf of one c64 matrix (cusolverDnCgetrf), the complex case the benchmark measures, as Direct's calls: the call,
// devInfo copied to the host, the stream synchronised.
struct DirectComplex {
  Routine routine;
  int n;
  cudaStream_t stream{};
  cusolverDnHandle_t handle{};
  cuComplex *a{}, *pristine{}, *work{};
  float* w{};
  int *ipiv{}, *info{}, *host_info{};
  int lwork = 0;

  DirectComplex(Routine r, const std::vector<std::complex<float>>& host, int size, int) : routine(r), n(size) {
    static_assert(sizeof(cuComplex) == sizeof(std::complex<float>), "c64 is cuComplex's layout");
    const std::size_t bytes = host.size() * sizeof(cuComplex);
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check_solver(cusolverDnCreate(&handle), "cusolverDnCreate");
    check_solver(cusolverDnSetStream(handle, stream), "cusolverDnSetStream");
    check_cuda(cudaMalloc(&a, bytes), "a");
    check_cuda(cudaMalloc(&pristine, bytes), "pristine");
    check_cuda(cudaMalloc(&ipiv, n * sizeof(int)), "ipiv");
    check_cuda(cudaMalloc(&w, n * sizeof(float)), "w");
    check_cuda(cudaMalloc(&info, sizeof(int)), "info");
    check_cuda(cudaMallocHost(&host_info, sizeof(int)), "host info");
    check_cuda(cudaMemcpy(pristine, host.data(), bytes, cudaMemcpyHostToDevice), "upload");
    if (routine == Routine::syevd) {
      check_solver(
          cusolverDnCheevd_bufferSize(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w, &lwork),
          "Cheevd_bufferSize");
    } else {
      check_solver(cusolverDnCgetrf_bufferSize(handle, n, n, a, n, &lwork), "Cgetrf_bufferSize");
    }
    check_cuda(cudaMalloc(&work, std::max(lwork, 1) * sizeof(cuComplex)), "work");
  }
  ~DirectComplex() {
    cudaStreamSynchronize(stream);
    cusolverDnDestroy(handle);
    for (void* p : {static_cast<void*>(a), static_cast<void*>(pristine), static_cast<void*>(work),
                    static_cast<void*>(ipiv), static_cast<void*>(w), static_cast<void*>(info)})
      cudaFree(p);
    cudaFreeHost(host_info);
    cudaStreamDestroy(stream);
  }
  [[nodiscard]] const char* variant() const { return "cusolver"; }
  void restore() {
    check_cuda(cudaMemcpyAsync(a, pristine, std::size_t(n) * n * sizeof(cuComplex), cudaMemcpyDeviceToDevice, stream),
               "restore");
    check_cuda(cudaStreamSynchronize(stream), "sync");
  }
  void call() {
    if (routine == Routine::syevd) {
      check_solver(
          cusolverDnCheevd(handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a, n, w, work, lwork, info),
          "Cheevd");
    } else {
      check_solver(cusolverDnCgetrf(handle, n, n, a, n, work, ipiv, info), "Cgetrf");
    }
    check_cuda(cudaMemcpyAsync(host_info, info, sizeof(int), cudaMemcpyDeviceToHost, stream), "info");
    check_cuda(cudaStreamSynchronize(stream), "sync");
    if (*host_info != 0) {
      fmt::print(stderr, "{} (c64): info {}\n", name(routine), *host_info);
      accel::bench::exit_now(1);
    }
  }
};

}  // namespace solver_bench

// What the GPU benchmarks do when a CUDA or CUDA-library call fails: say which and exit, since every later figure
// would be meaningless.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "common/exit_now.hpp"

namespace accel::bench {

inline void check_cuda(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    fmt::print(stderr, "{}: {}\n", what, cudaGetErrorString(error));
    exit_now(1);
  }
}

// cuBLASLt's status, said by its name.
inline void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    fmt::print(stderr, "{}: {}\n", what, cublasLtGetStatusString(status));
    exit_now(1);
  }
}

// A library's status (cufftResult, curandStatus_t, cusolverStatus_t, ...) against its success value.
template <class LibraryStatus>
void check_library(LibraryStatus status, LibraryStatus success, const char* library, const char* what) {
  if (status != success) {
    fmt::print(stderr, "{}: {} status {}\n", what, library, static_cast<int>(status));
    exit_now(1);
  }
}

}  // namespace accel::bench

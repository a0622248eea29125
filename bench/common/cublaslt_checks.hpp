// cuBLASLt's status checked as cuda_checks.hpp checks CUDA's: said by name, then exit.
#pragma once

#include <cublasLt.h>
#include <fmt/format.h>

#include "common/exit_now.hpp"

namespace accel::bench {

inline void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    fmt::print(stderr, "{}: {}\n", what, cublasLtGetStatusString(status));
    exit_now(1);
  }
}

}  // namespace accel::bench

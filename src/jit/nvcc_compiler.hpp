// nvcc as a subprocess: one rendered CUDA C++ translation unit to a loadable shared object (host code and its
// kernels built from the same template instantiation), for CUTLASS modules.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "accel/core/result.hpp"

namespace accel::jit {

struct NvccToolchain {
  std::filesystem::path nvcc;                              // the nvcc executable
  std::vector<std::filesystem::path> include_directories;  // e.g. CUTLASS's include/ and tools/util/include
  std::string identity;  // "nvcc 13.0.88 / g++ 13.3.0": nvcc --version and the host compiler's version, for keys

  // $ACCEL_NVCC, else $CUDA_HOME/bin/nvcc, else the toolkit accel was built with, else nvcc on $PATH; the
  // CUTLASS headers from $ACCEL_CUTLASS_DIR, else the ones scripts/setup fetched. failed_precondition naming
  // what is missing.
  static Result<NvccToolchain> locate();
};

struct NvccOptions {
  int compute_capability = 90;  // sm_90a for 90 (wgmma/TMA need the arch-specific target)
  std::vector<std::string> extra_flags;
  std::chrono::seconds timeout{900};  // a compile that runs longer is killed: deadline_exceeded
  std::filesystem::path scratch;      // where the source and output are written; empty: a private temp dir
};

// Compiles `source` into a shared object and returns its bytes. Errors: invalid_argument carrying nvcc's output
// (trimmed to its first errors) when the source does not compile; failed_precondition when nvcc cannot run.
[[nodiscard]] Result<std::vector<std::byte>> compile_shared_object(const NvccToolchain& toolchain,
                                                                   const std::string& source,
                                                                   const NvccOptions& options);

}  // namespace accel::jit

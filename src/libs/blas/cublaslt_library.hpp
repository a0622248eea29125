// cuBLASLt, loaded when first needed rather than linked (operation/runtime_library.hpp says why): the start-up
// thread (CublasLtStartup) loads it while the process does what it can without it.
#pragma once

#include <cublasLt.h>

#include <string_view>

#include "accel/core/library_version.hpp"
#include "accel/core/result.hpp"

namespace accel::blas {

// The entry points the BLAS family calls.
struct CublasLtApi {
// clang-format off
#define ACCEL_CUBLASLT_FUNCTIONS(X) \
  X(cublasLtCreate) \
  X(cublasLtDestroy) \
  X(cublasLtGetVersion) \
  X(cublasLtGetStatusName) \
  X(cublasLtGetStatusString) \
  X(cublasLtMatmul) \
  X(cublasLtMatmulAlgoGetHeuristic) \
  X(cublasLtMatmulDescCreate) \
  X(cublasLtMatmulDescDestroy) \
  X(cublasLtMatmulDescSetAttribute) \
  X(cublasLtMatmulPreferenceCreate) \
  X(cublasLtMatmulPreferenceDestroy) \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatrixLayoutCreate) \
  X(cublasLtMatrixLayoutDestroy) \
  X(cublasLtMatrixLayoutSetAttribute)
// clang-format on
#define ACCEL_CUBLASLT_MEMBER(name) decltype(&::name) name = nullptr;
  ACCEL_CUBLASLT_FUNCTIONS(ACCEL_CUBLASLT_MEMBER)
#undef ACCEL_CUBLASLT_MEMBER
};

// The library, loaded the first time (libcublasLt.so.<major this build was made with> where the dynamic loader
// finds it, else the toolkit's copy this build was configured with); unavailable, naming what was tried, where
// neither loads or the one found is of another major version.
[[nodiscard]] Result<const CublasLtApi*> cublaslt_api();
// The table if cuBLASLt is loaded already, else null; never loads it.
[[nodiscard]] const CublasLtApi* loaded_cublaslt_api() noexcept;

// A cuBLAS status as ours.
[[nodiscard]] Status cublas_status(cublasStatus_t status, std::string_view what);

// {"cuBLASLt", "13.1.0"} of the library loaded, or {"cuBLASLt", "not loaded yet"}: asking never loads it, since
// a device's description is read on the way to a process's first embedding.
[[nodiscard]] LibraryVersion cublaslt_library();

}  // namespace accel::blas

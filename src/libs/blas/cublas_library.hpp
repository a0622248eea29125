// cuBLAS (the library of BLAS routines, not cuBLASLt), loaded when first needed rather than linked
// (operation/runtime_library.hpp says why): the BLAS family's levels 1-3 beyond GEMM call it.
#pragma once

#include <cublas_api.h>

#include "accel/core/library_version.hpp"
#include "accel/core/result.hpp"

namespace accel::blas {

// The entry points the BLAS family calls (the _v2 names are the symbols cublas_v2.h's macros stand for).
struct CublasApi {
// clang-format off
#define ACCEL_CUBLAS_FUNCTIONS(X) \
  X(cublasCreate_v2) \
  X(cublasDestroy_v2) \
  X(cublasGetProperty) \
  X(cublasSetPointerMode_v2) \
  X(cublasSetStream_v2) \
  X(cublasCaxpy_v2) \
  X(cublasCcopy_v2) \
  X(cublasCdotc_v2) \
  X(cublasCdotu_v2) \
  X(cublasCopyEx) \
  X(cublasCscal_v2) \
  X(cublasCsrot_v2) \
  X(cublasCsscal_v2) \
  X(cublasCswap_v2) \
  X(cublasDasum_v2) \
  X(cublasDaxpy_v2) \
  X(cublasDcopy_v2) \
  X(cublasDdot_v2) \
  X(cublasDgeam) \
  X(cublasDgemm_v2) \
  X(cublasDgemvStridedBatched) \
  X(cublasDgemv_v2) \
  X(cublasDnrm2_v2) \
  X(cublasDotEx) \
  X(cublasDrot_v2) \
  X(cublasDscal_v2) \
  X(cublasDswap_v2) \
  X(cublasDsymm_v2) \
  X(cublasDsyrk_v2) \
  X(cublasDtrmm_v2) \
  X(cublasDtrsm_v2) \
  X(cublasDtrsv_v2) \
  X(cublasDzasum_v2) \
  X(cublasDznrm2_v2) \
  X(cublasHSHgemvStridedBatched) \
  X(cublasIamaxEx) \
  X(cublasIaminEx) \
  X(cublasIcamax_v2) \
  X(cublasIcamin_v2) \
  X(cublasIdamax_v2) \
  X(cublasIdamin_v2) \
  X(cublasIsamax_v2) \
  X(cublasIsamin_v2) \
  X(cublasIzamax_v2) \
  X(cublasIzamin_v2) \
  X(cublasNrm2Ex) \
  X(cublasRotEx) \
  X(cublasSasum_v2) \
  X(cublasSaxpy_v2) \
  X(cublasScalEx) \
  X(cublasScasum_v2) \
  X(cublasScnrm2_v2) \
  X(cublasScopy_v2) \
  X(cublasSdot_v2) \
  X(cublasSgeam) \
  X(cublasSgemm_v2) \
  X(cublasSgemvStridedBatched) \
  X(cublasSgemv_v2) \
  X(cublasSnrm2_v2) \
  X(cublasSrot_v2) \
  X(cublasSscal_v2) \
  X(cublasSswap_v2) \
  X(cublasSsymm_v2) \
  X(cublasSsyrk_v2) \
  X(cublasStrmm_v2) \
  X(cublasStrsm_v2) \
  X(cublasStrsv_v2) \
  X(cublasSwapEx) \
  X(cublasTSTgemvStridedBatched) \
  X(cublasZaxpy_v2) \
  X(cublasZcopy_v2) \
  X(cublasZdotc_v2) \
  X(cublasZdotu_v2) \
  X(cublasZdrot_v2) \
  X(cublasZdscal_v2) \
  X(cublasZscal_v2) \
  X(cublasZswap_v2)
// clang-format on
#define ACCEL_CUBLAS_MEMBER(name) decltype(&::name) name = nullptr;
  ACCEL_CUBLAS_FUNCTIONS(ACCEL_CUBLAS_MEMBER)
#undef ACCEL_CUBLAS_MEMBER
};

// The library, loaded the first time (libcublas.so.<major this build was made with> where the dynamic loader finds
// it, else the toolkit's copy this build was configured with); unavailable, naming what was tried, where neither
// loads or the one found is of another major version.
[[nodiscard]] Result<const CublasApi*> cublas_api();

// {"cuBLAS", "13.1.0"} of the library loaded, or {"cuBLAS", "not loaded yet"}: asking never loads it.
[[nodiscard]] LibraryVersion cublas_library();

}  // namespace accel::blas

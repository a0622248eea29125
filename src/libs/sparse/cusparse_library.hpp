// cuSPARSE, loaded when first needed rather than linked (operation/runtime_library.hpp says why): libcusparse
// brings libnvJitLink with it, 14 ms of a process's start on the H100 whether or not it does sparse work.
#pragma once

#include <cusparse.h>

#include "accel/core/library_version.hpp"
#include "accel/core/result.hpp"

namespace accel::sparse {

// The entry points the sparse family calls.
struct CusparseApi {
// clang-format off
#define ACCEL_CUSPARSE_FUNCTIONS(X) \
  X(cusparseCreate) \
  X(cusparseCreateBlockedEll) \
  X(cusparseCreateCoo) \
  X(cusparseCreateCsc) \
  X(cusparseCreateCsr) \
  X(cusparseCreateDnMat) \
  X(cusparseCreateDnVec) \
  X(cusparseCsrSetPointers) \
  X(cusparseDenseToSparse_analysis) \
  X(cusparseDenseToSparse_bufferSize) \
  X(cusparseDenseToSparse_convert) \
  X(cusparseDestroy) \
  X(cusparseDestroyDnMat) \
  X(cusparseDestroyDnVec) \
  X(cusparseDestroySpMat) \
  X(cusparseGetErrorName) \
  X(cusparseGetProperty) \
  X(cusparseSDDMM) \
  X(cusparseSDDMM_bufferSize) \
  X(cusparseSDDMM_preprocess) \
  X(cusparseSetStream) \
  X(cusparseSpGEMM_compute) \
  X(cusparseSpGEMM_copy) \
  X(cusparseSpGEMM_createDescr) \
  X(cusparseSpGEMM_destroyDescr) \
  X(cusparseSpGEMM_workEstimation) \
  X(cusparseSpMM) \
  X(cusparseSpMM_bufferSize) \
  X(cusparseSpMM_preprocess) \
  X(cusparseSpMV) \
  X(cusparseSpMV_bufferSize) \
  X(cusparseSpMV_preprocess) \
  X(cusparseSpMatGetSize) \
  X(cusparseSpMatSetAttribute) \
  X(cusparseSpMatSetValues) \
  X(cusparseSpSV_analysis) \
  X(cusparseSpSV_bufferSize) \
  X(cusparseSpSV_createDescr) \
  X(cusparseSpSV_destroyDescr) \
  X(cusparseSpSV_solve) \
  X(cusparseSpSV_updateMatrix) \
  X(cusparseSparseToDense) \
  X(cusparseSparseToDense_bufferSize)
// clang-format on
#define ACCEL_CUSPARSE_MEMBER(name) decltype(&::name) name = nullptr;
  ACCEL_CUSPARSE_FUNCTIONS(ACCEL_CUSPARSE_MEMBER)
#undef ACCEL_CUSPARSE_MEMBER
};

// The library, loaded the first time (libcusparse.so.<major this build was made with> where the dynamic loader
// finds it, else the toolkit's copy this build was configured with); unavailable, naming what was tried, where
// neither loads or the one found is of another major version.
[[nodiscard]] Result<const CusparseApi*> cusparse_api();
// The table if cuSPARSE is loaded already, else null; never loads it.
[[nodiscard]] const CusparseApi* loaded_cusparse_api() noexcept;

// {"cuSPARSE", "12.6.3"} of the library loaded, or {"cuSPARSE", "not loaded yet"}: asking never loads it, since
// a device's description is read by processes that never do sparse work.
[[nodiscard]] LibraryVersion cusparse_library();

}  // namespace accel::sparse

// cuSOLVER, loaded when first needed rather than linked (operation/runtime_library.hpp says why): libcusolver
// brings cuBLAS and cuBLASLt with it, 70 ms of a process's start on the H100 whether or not it solves anything.
#pragma once

#include <cusolverDn.h>

#include "accel/core/library_version.hpp"
#include "accel/core/result.hpp"

namespace accel::solver {

// The entry points the solver family calls (C and Z: the complex LU, Cholesky, Hermitian eigen, QR and SVDs).
struct CusolverApi {
// clang-format off
#define ACCEL_CUSOLVER_FUNCTIONS(X) \
  X(cusolverDnCgeqrf) \
  X(cusolverDnCgeqrf_bufferSize) \
  X(cusolverDnCgesvd) \
  X(cusolverDnCgesvd_bufferSize) \
  X(cusolverDnCgesvdj) \
  X(cusolverDnCgesvdjBatched) \
  X(cusolverDnCgesvdjBatched_bufferSize) \
  X(cusolverDnCgesvdj_bufferSize) \
  X(cusolverDnCgetrf) \
  X(cusolverDnCgetrf_bufferSize) \
  X(cusolverDnCgetrs) \
  X(cusolverDnCheevd) \
  X(cusolverDnCheevd_bufferSize) \
  X(cusolverDnCpotrf) \
  X(cusolverDnCpotrfBatched) \
  X(cusolverDnCpotrf_bufferSize) \
  X(cusolverDnCpotrs) \
  X(cusolverDnCreate) \
  X(cusolverDnCreateGesvdjInfo) \
  X(cusolverDnCungqr) \
  X(cusolverDnCungqr_bufferSize) \
  X(cusolverDnCunmqr) \
  X(cusolverDnCunmqr_bufferSize) \
  X(cusolverDnDestroy) \
  X(cusolverDnDestroyGesvdjInfo) \
  X(cusolverDnDgeqrf) \
  X(cusolverDnDgeqrf_bufferSize) \
  X(cusolverDnDgesvd) \
  X(cusolverDnDgesvd_bufferSize) \
  X(cusolverDnDgesvdj) \
  X(cusolverDnDgesvdjBatched) \
  X(cusolverDnDgesvdjBatched_bufferSize) \
  X(cusolverDnDgesvdj_bufferSize) \
  X(cusolverDnDgetrf) \
  X(cusolverDnDgetrf_bufferSize) \
  X(cusolverDnDgetrs) \
  X(cusolverDnDorgqr) \
  X(cusolverDnDorgqr_bufferSize) \
  X(cusolverDnDormqr) \
  X(cusolverDnDormqr_bufferSize) \
  X(cusolverDnDpotrf) \
  X(cusolverDnDpotrfBatched) \
  X(cusolverDnDpotrf_bufferSize) \
  X(cusolverDnDpotrs) \
  X(cusolverDnDsyevd) \
  X(cusolverDnDsyevd_bufferSize) \
  X(cusolverDnSetStream) \
  X(cusolverDnSgeqrf) \
  X(cusolverDnSgeqrf_bufferSize) \
  X(cusolverDnSgesvd) \
  X(cusolverDnSgesvd_bufferSize) \
  X(cusolverDnSgesvdj) \
  X(cusolverDnSgesvdjBatched) \
  X(cusolverDnSgesvdjBatched_bufferSize) \
  X(cusolverDnSgesvdj_bufferSize) \
  X(cusolverDnSgetrf) \
  X(cusolverDnSgetrf_bufferSize) \
  X(cusolverDnSgetrs) \
  X(cusolverDnSorgqr) \
  X(cusolverDnSorgqr_bufferSize) \
  X(cusolverDnSormqr) \
  X(cusolverDnSormqr_bufferSize) \
  X(cusolverDnSpotrf) \
  X(cusolverDnSpotrfBatched) \
  X(cusolverDnSpotrf_bufferSize) \
  X(cusolverDnSpotrs) \
  X(cusolverDnSsyevd) \
  X(cusolverDnSsyevd_bufferSize) \
  X(cusolverDnXgesvdjSetMaxSweeps) \
  X(cusolverDnXgesvdjSetTolerance) \
  X(cusolverDnZgeqrf) \
  X(cusolverDnZgeqrf_bufferSize) \
  X(cusolverDnZgesvd) \
  X(cusolverDnZgesvd_bufferSize) \
  X(cusolverDnZgesvdj) \
  X(cusolverDnZgesvdjBatched) \
  X(cusolverDnZgesvdjBatched_bufferSize) \
  X(cusolverDnZgesvdj_bufferSize) \
  X(cusolverDnZgetrf) \
  X(cusolverDnZgetrf_bufferSize) \
  X(cusolverDnZgetrs) \
  X(cusolverDnZheevd) \
  X(cusolverDnZheevd_bufferSize) \
  X(cusolverDnZpotrf) \
  X(cusolverDnZpotrfBatched) \
  X(cusolverDnZpotrf_bufferSize) \
  X(cusolverDnZpotrs) \
  X(cusolverDnZungqr) \
  X(cusolverDnZungqr_bufferSize) \
  X(cusolverDnZunmqr) \
  X(cusolverDnZunmqr_bufferSize) \
  X(cusolverGetProperty)
// clang-format on
#define ACCEL_CUSOLVER_MEMBER(name) decltype(&::name) name = nullptr;
  ACCEL_CUSOLVER_FUNCTIONS(ACCEL_CUSOLVER_MEMBER)
#undef ACCEL_CUSOLVER_MEMBER
};

// The library, loaded the first time (libcusolver.so.<major this build was made with> where the dynamic loader
// finds it, else the toolkit's copy this build was configured with); unavailable, naming what was tried, where
// neither loads or the one found is of another major version.
[[nodiscard]] Result<const CusolverApi*> cusolver_api();

// {"cuSOLVER", "12.0.4"} of the library loaded, or {"cuSOLVER", "not loaded yet"}: asking never loads it.
[[nodiscard]] LibraryVersion cusolver_library();

}  // namespace accel::solver

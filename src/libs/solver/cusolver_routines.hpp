// Each element type's cuSOLVER routines that more than one request calls: LU's (Getrf, Getrs, and Gels's solve with R)
// and QR's (Geqrf, Orgqr, Ormqr, and Gels's factorisation and Qᴴ B); ungqr and unmqr for complex Q.
#pragma once

#include <cuComplex.h>

#include <string_view>
#include <type_traits>

#include "libs/solver/cusolver_library.hpp"

namespace accel::solver {

template <class T>
struct LuRoutines;
template <>
struct LuRoutines<float> {
  static constexpr auto buffer_size = &CusolverApi::cusolverDnSgetrf_bufferSize;
  static constexpr auto getrf = &CusolverApi::cusolverDnSgetrf;
  static constexpr auto getrs = &CusolverApi::cusolverDnSgetrs;
  static constexpr std::string_view getrf_name = "cusolverDnSgetrf";
  static constexpr std::string_view getrs_name = "cusolverDnSgetrs";
};
template <>
struct LuRoutines<double> {
  static constexpr auto buffer_size = &CusolverApi::cusolverDnDgetrf_bufferSize;
  static constexpr auto getrf = &CusolverApi::cusolverDnDgetrf;
  static constexpr auto getrs = &CusolverApi::cusolverDnDgetrs;
  static constexpr std::string_view getrf_name = "cusolverDnDgetrf";
  static constexpr std::string_view getrs_name = "cusolverDnDgetrs";
};
template <>
struct LuRoutines<cuComplex> {
  static constexpr auto buffer_size = &CusolverApi::cusolverDnCgetrf_bufferSize;
  static constexpr auto getrf = &CusolverApi::cusolverDnCgetrf;
  static constexpr auto getrs = &CusolverApi::cusolverDnCgetrs;
  static constexpr std::string_view getrf_name = "cusolverDnCgetrf";
  static constexpr std::string_view getrs_name = "cusolverDnCgetrs";
};
template <>
struct LuRoutines<cuDoubleComplex> {
  static constexpr auto buffer_size = &CusolverApi::cusolverDnZgetrf_bufferSize;
  static constexpr auto getrf = &CusolverApi::cusolverDnZgetrf;
  static constexpr auto getrs = &CusolverApi::cusolverDnZgetrs;
  static constexpr std::string_view getrf_name = "cusolverDnZgetrf";
  static constexpr std::string_view getrs_name = "cusolverDnZgetrs";
};

template <class T>
struct QrRoutines;
template <>
struct QrRoutines<float> {
  static constexpr auto geqrf_size = &CusolverApi::cusolverDnSgeqrf_bufferSize;
  static constexpr auto geqrf = &CusolverApi::cusolverDnSgeqrf;
  static constexpr std::string_view geqrf_name = "cusolverDnSgeqrf";
  static constexpr auto orgqr_size = &CusolverApi::cusolverDnSorgqr_bufferSize;
  static constexpr auto orgqr = &CusolverApi::cusolverDnSorgqr;
  static constexpr std::string_view orgqr_name = "cusolverDnSorgqr";
  static constexpr auto ormqr_size = &CusolverApi::cusolverDnSormqr_bufferSize;
  static constexpr auto ormqr = &CusolverApi::cusolverDnSormqr;
  static constexpr std::string_view ormqr_name = "cusolverDnSormqr";
};
template <>
struct QrRoutines<double> {
  static constexpr auto geqrf_size = &CusolverApi::cusolverDnDgeqrf_bufferSize;
  static constexpr auto geqrf = &CusolverApi::cusolverDnDgeqrf;
  static constexpr std::string_view geqrf_name = "cusolverDnDgeqrf";
  static constexpr auto orgqr_size = &CusolverApi::cusolverDnDorgqr_bufferSize;
  static constexpr auto orgqr = &CusolverApi::cusolverDnDorgqr;
  static constexpr std::string_view orgqr_name = "cusolverDnDorgqr";
  static constexpr auto ormqr_size = &CusolverApi::cusolverDnDormqr_bufferSize;
  static constexpr auto ormqr = &CusolverApi::cusolverDnDormqr;
  static constexpr std::string_view ormqr_name = "cusolverDnDormqr";
};

template <>
struct QrRoutines<cuComplex> {
  static constexpr auto geqrf_size = &CusolverApi::cusolverDnCgeqrf_bufferSize;
  static constexpr auto geqrf = &CusolverApi::cusolverDnCgeqrf;
  static constexpr std::string_view geqrf_name = "cusolverDnCgeqrf";
  static constexpr auto orgqr_size = &CusolverApi::cusolverDnCungqr_bufferSize;
  static constexpr auto orgqr = &CusolverApi::cusolverDnCungqr;
  static constexpr std::string_view orgqr_name = "cusolverDnCungqr";
  static constexpr auto ormqr_size = &CusolverApi::cusolverDnCunmqr_bufferSize;
  static constexpr auto ormqr = &CusolverApi::cusolverDnCunmqr;
  static constexpr std::string_view ormqr_name = "cusolverDnCunmqr";
};
template <>
struct QrRoutines<cuDoubleComplex> {
  static constexpr auto geqrf_size = &CusolverApi::cusolverDnZgeqrf_bufferSize;
  static constexpr auto geqrf = &CusolverApi::cusolverDnZgeqrf;
  static constexpr std::string_view geqrf_name = "cusolverDnZgeqrf";
  static constexpr auto orgqr_size = &CusolverApi::cusolverDnZungqr_bufferSize;
  static constexpr auto orgqr = &CusolverApi::cusolverDnZungqr;
  static constexpr std::string_view orgqr_name = "cusolverDnZungqr";
  static constexpr auto ormqr_size = &CusolverApi::cusolverDnZunmqr_bufferSize;
  static constexpr auto ormqr = &CusolverApi::cusolverDnZunmqr;
  static constexpr std::string_view ormqr_name = "cusolverDnZunmqr";
};

// Qᵀ, or Qᴴ for a complex Q, as ormqr and unmqr take it.
template <class T>
inline constexpr cublasOperation_t kQTransposed = std::is_floating_point_v<T> ? CUBLAS_OP_T : CUBLAS_OP_C;

}  // namespace accel::solver

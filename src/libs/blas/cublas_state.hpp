// cuBLAS on a CUDA stream, as the BLAS requests beyond GEMM share it: a handle per stream bound to it, and the
// routines of each element type. Scalars the host gives (alpha, beta) go by host pointer; the results of reductions
// (Dot, Nrm2, Asum, Iamax) by device pointer, straight into the request's result buffer in stream order, so that no
// request waits for the GPU. The pointer mode is a setting of the handle that cuBLAS reads when a call is made, so
// each run sets the mode it needs before its calls.
#pragma once

#include <complex>
#include <memory>
#include <string_view>

#include "accel/libs/blas/level3.hpp"
#include "libs/blas/cublas_library.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::blas {

// What cuBLAS keeps per stream: its handle, set to the stream. Opening the first loads the library.
class CublasState final : public TargetState {
 public:
  static Result<std::unique_ptr<CublasState>> open(CudaTarget& target);
  ~CublasState() override;
  CublasState(const CublasState&) = delete;
  CublasState& operator=(const CublasState&) = delete;

  [[nodiscard]] const CublasApi& api() const noexcept { return api_; }
  [[nodiscard]] cublasHandle_t handle() const noexcept { return handle_; }

 private:
  CublasState(const CublasApi& api, cublasHandle_t handle) : api_(api), handle_(handle) {}
  const CublasApi& api_;
  cublasHandle_t handle_;
};

// A planned BLAS request: the stream's cuBLAS. Nothing else is planned: cuBLAS's legacy routines choose their kernels
// at each call, and need no workspace beyond the handle's own.
struct CublasPlan {
  const CublasApi* api = nullptr;
  cublasHandle_t handle = nullptr;
};

// The stream's cuBLAS, opened on its first request.
[[nodiscard]] Result<CublasPlan> plan_cublas(CudaTarget& target);

// What the CUDA half of every cuBLAS request shares: its plan (the stream's handle), no workspace, the report.
struct CublasOperation {
  using Plan = CublasPlan;
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static void describe(CudaTarget& target, LibraryReport& report);
};

// Sets the handle's pointer mode: host for alpha and beta, device for the results of reductions.
[[nodiscard]] Status set_pointer_mode(const CublasPlan& plan, CudaRun& run, cublasPointerMode_t mode);

// A cuBLAS launch's status, with a sticky CUDA error behind a failure taking precedence.
[[nodiscard]] Status cublas_launched(CudaRun& run, cublasStatus_t status, std::string_view what);

// A routine's name as cuBLAS spells it ("cublasSgemv"; with `index`, "cublasIsamax": the letter after the I, in
// lower case), put together only when its launch failed: every launch names one.
struct RoutineName {
  char letter;
  std::string_view name;
  bool index = false;
};
[[nodiscard]] Status cublas_launched(CudaRun& run, cublasStatus_t status, RoutineName routine);

[[nodiscard]] inline cublasOperation_t to_cublas(Transpose transpose) noexcept {
  return transpose == Transpose::transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
}
[[nodiscard]] inline cublasFillMode_t to_cublas(Fill fill) noexcept {
  return fill == Fill::upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
}
[[nodiscard]] inline cublasSideMode_t to_cublas(Side side) noexcept {
  return side == Side::right ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
}
[[nodiscard]] inline cublasDiagType_t to_cublas(Diagonal diagonal) noexcept {
  return diagonal == Diagonal::unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
}
// A size, leading dimension or increment as cuBLAS's int; the request's validation checked that it fits.
[[nodiscard]] inline int to_int(std::int64_t value) noexcept { return static_cast<int>(value); }

// The routines of one element type, as members of CublasApi.
template <class T>
struct CublasRoutines;
template <>
struct CublasRoutines<float> {
  static constexpr auto axpy = &CublasApi::cublasSaxpy_v2;
  static constexpr auto scal = &CublasApi::cublasSscal_v2;
  static constexpr auto dot = &CublasApi::cublasSdot_v2;
  static constexpr auto nrm2 = &CublasApi::cublasSnrm2_v2;
  static constexpr auto asum = &CublasApi::cublasSasum_v2;
  static constexpr auto iamax = &CublasApi::cublasIsamax_v2;
  static constexpr auto gemv = &CublasApi::cublasSgemv_v2;
  static constexpr auto gemv_batched = &CublasApi::cublasSgemvStridedBatched;
  static constexpr auto trsm = &CublasApi::cublasStrsm_v2;
  static constexpr auto syrk = &CublasApi::cublasSsyrk_v2;
  static constexpr auto copy = &CublasApi::cublasScopy_v2;
  static constexpr auto swap = &CublasApi::cublasSswap_v2;
  static constexpr auto rot = &CublasApi::cublasSrot_v2;
  static constexpr auto iamin = &CublasApi::cublasIsamin_v2;
  static constexpr auto trsv = &CublasApi::cublasStrsv_v2;
  static constexpr auto symm = &CublasApi::cublasSsymm_v2;
  static constexpr auto gemm = &CublasApi::cublasSgemm_v2;
  static constexpr auto trmm = &CublasApi::cublasStrmm_v2;
  static constexpr auto geam = &CublasApi::cublasSgeam;
  static constexpr char kLetter = 'S';
  using Native = float;
  static constexpr RoutineName kNrm2{'S', "nrm2"}, kAsum{'S', "asum"}, kRot{'S', "rot"};
};
template <>
struct CublasRoutines<double> {
  static constexpr auto axpy = &CublasApi::cublasDaxpy_v2;
  static constexpr auto scal = &CublasApi::cublasDscal_v2;
  static constexpr auto dot = &CublasApi::cublasDdot_v2;
  static constexpr auto nrm2 = &CublasApi::cublasDnrm2_v2;
  static constexpr auto asum = &CublasApi::cublasDasum_v2;
  static constexpr auto iamax = &CublasApi::cublasIdamax_v2;
  static constexpr auto gemv = &CublasApi::cublasDgemv_v2;
  static constexpr auto gemv_batched = &CublasApi::cublasDgemvStridedBatched;
  static constexpr auto trsm = &CublasApi::cublasDtrsm_v2;
  static constexpr auto syrk = &CublasApi::cublasDsyrk_v2;
  static constexpr auto copy = &CublasApi::cublasDcopy_v2;
  static constexpr auto swap = &CublasApi::cublasDswap_v2;
  static constexpr auto rot = &CublasApi::cublasDrot_v2;
  static constexpr auto iamin = &CublasApi::cublasIdamin_v2;
  static constexpr auto trsv = &CublasApi::cublasDtrsv_v2;
  static constexpr auto symm = &CublasApi::cublasDsymm_v2;
  static constexpr auto gemm = &CublasApi::cublasDgemm_v2;
  static constexpr auto trmm = &CublasApi::cublasDtrmm_v2;
  static constexpr auto geam = &CublasApi::cublasDgeam;
  static constexpr char kLetter = 'D';
  using Native = double;
  static constexpr RoutineName kNrm2{'D', "nrm2"}, kAsum{'D', "asum"}, kRot{'D', "rot"};
};
// Level 1's complex routines (BLAS levels 2 and 3 take real types only): cuComplex and cuDoubleComplex hold a number
// as std::complex does; scal by a real factor, dot with and without x conjugated, and the real results of nrm2 and
// asum have routines of their own.
template <>
struct CublasRoutines<std::complex<float>> {
  static constexpr auto axpy = &CublasApi::cublasCaxpy_v2;
  static constexpr auto scal = &CublasApi::cublasCscal_v2;
  static constexpr auto real_scal = &CublasApi::cublasCsscal_v2;
  static constexpr auto dotu = &CublasApi::cublasCdotu_v2;
  static constexpr auto dotc = &CublasApi::cublasCdotc_v2;
  static constexpr auto nrm2 = &CublasApi::cublasScnrm2_v2;
  static constexpr auto asum = &CublasApi::cublasScasum_v2;
  static constexpr auto iamax = &CublasApi::cublasIcamax_v2;
  static constexpr auto copy = &CublasApi::cublasCcopy_v2;
  static constexpr auto swap = &CublasApi::cublasCswap_v2;
  static constexpr auto rot = &CublasApi::cublasCsrot_v2;
  static constexpr auto iamin = &CublasApi::cublasIcamin_v2;
  static constexpr char kLetter = 'C';
  using Native = cuComplex;
  static constexpr RoutineName kNrm2{'S', "cnrm2"}, kAsum{'S', "casum"}, kRot{'C', "srot"}, kRealScal{'C', "sscal"};
};
template <>
struct CublasRoutines<std::complex<double>> {
  static constexpr auto axpy = &CublasApi::cublasZaxpy_v2;
  static constexpr auto scal = &CublasApi::cublasZscal_v2;
  static constexpr auto real_scal = &CublasApi::cublasZdscal_v2;
  static constexpr auto dotu = &CublasApi::cublasZdotu_v2;
  static constexpr auto dotc = &CublasApi::cublasZdotc_v2;
  static constexpr auto nrm2 = &CublasApi::cublasDznrm2_v2;
  static constexpr auto asum = &CublasApi::cublasDzasum_v2;
  static constexpr auto iamax = &CublasApi::cublasIzamax_v2;
  static constexpr auto copy = &CublasApi::cublasZcopy_v2;
  static constexpr auto swap = &CublasApi::cublasZswap_v2;
  static constexpr auto rot = &CublasApi::cublasZdrot_v2;
  static constexpr auto iamin = &CublasApi::cublasIzamin_v2;
  static constexpr char kLetter = 'Z';
  using Native = cuDoubleComplex;
  static constexpr RoutineName kNrm2{'D', "znrm2"}, kAsum{'D', "zasum"}, kRot{'Z', "drot"}, kRealScal{'Z', "dscal"};
};

// An element of `data` as cuBLAS's routines for T take it (cuComplex for std::complex<float>).
template <class T>
[[nodiscard]] auto* native(void* data) noexcept {
  return static_cast<typename CublasRoutines<T>::Native*>(data);
}
template <class T>
[[nodiscard]] const auto* native(const void* data) noexcept {
  return static_cast<const typename CublasRoutines<T>::Native*>(data);
}

template <class T>
[[nodiscard]] constexpr RoutineName routine(std::string_view name) noexcept {
  return RoutineName{.letter = CublasRoutines<T>::kLetter, .name = name};
}
template <class T>
[[nodiscard]] constexpr RoutineName index_routine(std::string_view name) noexcept {
  return RoutineName{.letter = CublasRoutines<T>::kLetter, .name = name, .index = true};
}

}  // namespace accel::blas

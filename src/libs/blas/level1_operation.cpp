#include "libs/blas/level1_operation.hpp"

#include <cblas.h>

#include <fmt/format.h>

#include <cmath>
#include <complex>
#include <cstring>

#include "libs/blas/blas_checks.hpp"
#include "libs/blas/cpu_gemm.hpp"
#include "libs/blas/element_types.hpp"
#include "libs/blas/level1_narrow.hpp"
#include "libs/blas/openblas_kernels.hpp"
#include "operation/complex_dtypes.hpp"

namespace accel {
namespace {

using blas::Asum;
using blas::Axpy;
using blas::Copy;
using blas::Dot;
using blas::Iamax;
using blas::Iamin;
using blas::Nrm2;
using blas::Rot;
using blas::Scal;
using blas::Swap;

template <class T>
struct Cblas;
template <>
struct Cblas<float> {
  static constexpr auto axpy = &cblas_saxpy;
  static constexpr auto scal = &cblas_sscal;
  static constexpr auto dot = &cblas_sdot;
  static constexpr auto nrm2 = &cblas_snrm2;
  static constexpr auto asum = &cblas_sasum;
  static constexpr auto iamax = &cblas_isamax;
  static constexpr auto copy = &cblas_scopy;
  static constexpr auto swap = &cblas_sswap;
  static constexpr auto rot = &cblas_srot;
  static constexpr auto iamin = &cblas_isamin;
};
template <>
struct Cblas<double> {
  static constexpr auto axpy = &cblas_daxpy;
  static constexpr auto scal = &cblas_dscal;
  static constexpr auto dot = &cblas_ddot;
  static constexpr auto nrm2 = &cblas_dnrm2;
  static constexpr auto asum = &cblas_dasum;
  static constexpr auto iamax = &cblas_idamax;
  static constexpr auto copy = &cblas_dcopy;
  static constexpr auto swap = &cblas_dswap;
  static constexpr auto rot = &cblas_drot;
  static constexpr auto iamin = &cblas_idamin;
};
// The complex routines take their vectors and complex scalars as void pointers, and real c and s for the rotation;
// their asum is not called (complex_asum says why).
template <>
struct Cblas<std::complex<float>> {
  static constexpr auto axpy = &cblas_caxpy;
  static constexpr auto scal = &cblas_cscal;
  static constexpr auto real_scal = &cblas_csscal;
  static constexpr auto dotu = &cblas_cdotu_sub;
  static constexpr auto dotc = &cblas_cdotc_sub;
  static constexpr auto nrm2 = &cblas_scnrm2;
  static constexpr auto iamax = &cblas_icamax;
  static constexpr auto copy = &cblas_ccopy;
  static constexpr auto swap = &cblas_cswap;
  static constexpr auto rot = &cblas_csrot;
  static constexpr auto iamin = &cblas_icamin;
};
template <>
struct Cblas<std::complex<double>> {
  static constexpr auto axpy = &cblas_zaxpy;
  static constexpr auto scal = &cblas_zscal;
  static constexpr auto real_scal = &cblas_zdscal;
  static constexpr auto dotu = &cblas_zdotu_sub;
  static constexpr auto dotc = &cblas_zdotc_sub;
  static constexpr auto nrm2 = &cblas_dznrm2;
  static constexpr auto iamax = &cblas_izamax;
  static constexpr auto copy = &cblas_zcopy;
  static constexpr auto swap = &cblas_zswap;
  static constexpr auto rot = &cblas_zdrot;
  static constexpr auto iamin = &cblas_izamin;
};

// alpha_imag is the imaginary part of a complex scale: 0 unless the dtype is complex.
template <class Request>
Status check_scale(const Request& r) {
  if (r.alpha_imag == 0.0 || real_dtype(r.dtype) != r.dtype) return Status();
  return invalid_argument(fmt::format("{}: alpha_imag = {} needs a complex dtype (c64 or c128), not {}", Request::kName,
                                      r.alpha_imag, to_string(r.dtype)));
}

// The checks of a request with one vector x (and a result, unless it is Scal).
template <class Request>
Result<blas::VectorChecked<Request>> check_one_vector(const Request& r) {
  constexpr std::string_view name = Request::kName;
  blas::VectorChecked<Request> checked{.request = r};
  ACCEL_RETURN_IF_ERROR(blas::check_vector_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "n", r.n));
  ACCEL_ASSIGN_OR_RETURN(checked.x_extent, blas::check_vector(name, "x", r.n, r.incx, /*negative_allowed=*/false));
  return checked;
}

// The checks of a request with vectors x and y.
template <class Request>
Result<blas::VectorChecked<Request>> check_two_vectors(const Request& r) {
  constexpr std::string_view name = Request::kName;
  blas::VectorChecked<Request> checked{.request = r};
  ACCEL_RETURN_IF_ERROR(blas::check_vector_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "n", r.n));
  ACCEL_ASSIGN_OR_RETURN(checked.x_extent, blas::check_vector(name, "x", r.n, r.incx, /*negative_allowed=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.y_extent, blas::check_vector(name, "y", r.n, r.incy, /*negative_allowed=*/true));
  return checked;
}

// Stores a reduction's value as the result's dtype.
template <class T>
void store(const BufferView& result, T value) {
  std::memcpy(result.data, &value, sizeof(T));
}

int to_int(std::int64_t value) { return static_cast<int>(value); }  // validated to fit

// Σ |Re x_i| + |Im x_i| of a complex vector, from its parts: the real asum over them where they lie contiguous, else a
// loop. Not scasum: Debian's OpenBLAS 0.3.21 sums wrongly from n = 9 on its Cooperlake kernels (the core it picks on an
// AMD EPYC with AVX-512 BF16; off by 0.2 % to 11 % on random vectors), while its real asum and dzasum are right.
template <class Part>
Part complex_asum(std::int64_t n, const Part* parts, std::int64_t incx) {
  if (incx == 1 && 2 * n <= blas::kMaxBlasInt) return n == 0 ? Part(0) : Cblas<Part>::asum(to_int(2 * n), parts, 1);
  Part sum = 0;
  for (std::int64_t i = 0; i < n; ++i) sum += std::abs(parts[2 * i * incx]) + std::abs(parts[2 * i * incx + 1]);
  return sum;
}

}  // namespace

Result<Operation<Axpy>::Checked> Operation<Axpy>::validate(const Axpy& request) {
  ACCEL_RETURN_IF_ERROR(check_scale(request));
  return check_two_vectors(request);
}

void Operation<Axpy>::operands(const Axpy& request, const Checked& checked, Operands& operands) {
  operands.typed(request.x, "x", Access::read, request.dtype, checked.x_extent)
      .add(blas::exclusive_output(request.y, "y", request.dtype, checked.y_extent));
}

Status Operation<Axpy>::run_cpu(const Axpy& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (r.n == 0) return Status();
  if (blas::is_narrow_float(r.dtype)) return blas::run_narrow(r, views), Status();
  blas::ensure_openblas_kernels();
  blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    const T alpha = blas::scalar<T>(r.alpha, r.alpha_imag);
    const auto* from = static_cast<const T*>(views[x].data);
    auto* to = static_cast<T*>(views[y].data);
    if constexpr (kComplex<T>) {
      Cblas<T>::axpy(to_int(r.n), &alpha, from, to_int(r.incx), to, to_int(r.incy));
    } else {
      Cblas<T>::axpy(to_int(r.n), alpha, from, to_int(r.incx), to, to_int(r.incy));
    }
  });
  return Status();
}

void Operation<Axpy>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Scal>::Checked> Operation<Scal>::validate(const Scal& request) {
  ACCEL_RETURN_IF_ERROR(check_scale(request));
  return check_one_vector(request);
}

void Operation<Scal>::operands(const Scal& request, const Checked& checked, Operands& operands) {
  operands.add(blas::exclusive_output(request.x, "x", request.dtype, checked.x_extent));
}

Status Operation<Scal>::run_cpu(const Scal& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (r.n == 0) return Status();
  if (blas::is_narrow_float(r.dtype)) return blas::run_narrow(r, views), Status();
  blas::ensure_openblas_kernels();
  blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    auto* data = static_cast<T*>(views[x].data);
    if constexpr (kComplex<T>) {
      const T alpha = blas::scalar<T>(r.alpha, r.alpha_imag);
      if (r.alpha_imag == 0.0) {
        Cblas<T>::real_scal(to_int(r.n), alpha.real(), data, to_int(r.incx));
      } else {
        Cblas<T>::scal(to_int(r.n), &alpha, data, to_int(r.incx));
      }
    } else {
      Cblas<T>::scal(to_int(r.n), static_cast<T>(r.alpha), data, to_int(r.incx));
    }
  });
  return Status();
}

void Operation<Scal>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Dot>::Checked> Operation<Dot>::validate(const Dot& request) { return check_two_vectors(request); }

void Operation<Dot>::operands(const Dot& request, const Checked& checked, Operands& operands) {
  operands.typed(request.x, "x", Access::read, request.dtype, checked.x_extent)
      .typed(request.y, "y", Access::read, request.dtype, checked.y_extent)
      .add(blas::exclusive_output(request.result, "result", request.dtype, 1));
}

Status Operation<Dot>::run_cpu(const Dot& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (blas::is_narrow_float(r.dtype)) return blas::run_narrow(r, views), Status();
  blas::ensure_openblas_kernels();
  blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    T value(0);
    if (r.n != 0) {
      const auto* from_x = static_cast<const T*>(views[x].data);
      const auto* from_y = static_cast<const T*>(views[y].data);
      if constexpr (kComplex<T>) {
        (r.conjugate ? Cblas<T>::dotc : Cblas<T>::dotu)(to_int(r.n), from_x, to_int(r.incx), from_y, to_int(r.incy),
                                                        &value);
      } else {
        value = Cblas<T>::dot(to_int(r.n), from_x, to_int(r.incx), from_y, to_int(r.incy));
      }
    }
    store(views[result], value);
  });
  return Status();
}

void Operation<Dot>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Nrm2>::Checked> Operation<Nrm2>::validate(const Nrm2& request) { return check_one_vector(request); }

void Operation<Nrm2>::operands(const Nrm2& request, const Checked& checked, Operands& operands) {
  operands.typed(request.x, "x", Access::read, request.dtype, checked.x_extent)
      .add(blas::exclusive_output(request.result, "result", real_dtype(request.dtype), 1));
}

Status Operation<Nrm2>::run_cpu(const Nrm2& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (blas::is_narrow_float(r.dtype)) return blas::run_narrow(r, views), Status();
  blas::ensure_openblas_kernels();
  blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    using Part = part_t<T>;
    store(views[result],
          r.n == 0 ? Part(0) : Cblas<T>::nrm2(to_int(r.n), static_cast<const T*>(views[x].data), to_int(r.incx)));
  });
  return Status();
}

void Operation<Nrm2>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Asum>::Checked> Operation<Asum>::validate(const Asum& request) { return check_one_vector(request); }

void Operation<Asum>::operands(const Asum& request, const Checked& checked, Operands& operands) {
  operands.typed(request.x, "x", Access::read, request.dtype, checked.x_extent)
      .add(blas::exclusive_output(request.result, "result", real_dtype(request.dtype), 1));
}

Status Operation<Asum>::run_cpu(const Asum& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (blas::is_narrow_float(r.dtype)) return blas::run_narrow(r, views), Status();
  blas::ensure_openblas_kernels();
  blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    using Part = part_t<T>;
    if constexpr (kComplex<T>) {
      store(views[result], complex_asum(r.n, static_cast<const Part*>(views[x].data), r.incx));
    } else {
      store(views[result],
            r.n == 0 ? T(0) : Cblas<T>::asum(to_int(r.n), static_cast<const T*>(views[x].data), to_int(r.incx)));
    }
  });
  return Status();
}

void Operation<Asum>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Iamax>::Checked> Operation<Iamax>::validate(const Iamax& request) { return check_one_vector(request); }

void Operation<Iamax>::operands(const Iamax& request, const Checked& checked, Operands& operands) {
  operands.typed(request.x, "x", Access::read, request.dtype, checked.x_extent)
      .add(blas::exclusive_output(request.result, "result", DType::i32, 1));
}

Status Operation<Iamax>::run_cpu(const Iamax& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (blas::is_narrow_float(r.dtype)) return blas::run_narrow(r, views), Status();
  blas::ensure_openblas_kernels();
  // CBLAS counts from 0; the request, as BLAS and cuBLAS, from 1 (0: empty).
  const std::int32_t index = r.n == 0 ? 0 : blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    return static_cast<std::int32_t>(
        Cblas<T>::iamax(to_int(r.n), static_cast<const T*>(views[x].data), to_int(r.incx)) + 1);
  });
  store(views[result], index);
  return Status();
}

void Operation<Iamax>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Copy>::Checked> Operation<Copy>::validate(const Copy& request) { return check_two_vectors(request); }

void Operation<Copy>::operands(const Copy& request, const Checked& checked, Operands& operands) {
  operands.typed(request.x, "x", Access::read, request.dtype, checked.x_extent)
      .add(blas::exclusive_output(request.y, "y", request.dtype, checked.y_extent));
}

Status Operation<Copy>::run_cpu(const Copy& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (r.n == 0) return Status();
  if (blas::is_narrow_float(r.dtype)) return blas::run_narrow(r, views), Status();
  blas::ensure_openblas_kernels();
  blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    Cblas<T>::copy(to_int(r.n), static_cast<const T*>(views[x].data), to_int(r.incx), static_cast<T*>(views[y].data),
                   to_int(r.incy));
  });
  return Status();
}

void Operation<Copy>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Swap>::Checked> Operation<Swap>::validate(const Swap& request) { return check_two_vectors(request); }

void Operation<Swap>::operands(const Swap& request, const Checked& checked, Operands& operands) {
  operands.add(blas::exclusive_output(request.x, "x", request.dtype, checked.x_extent))
      .add(blas::exclusive_output(request.y, "y", request.dtype, checked.y_extent));
}

Status Operation<Swap>::run_cpu(const Swap& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (r.n == 0) return Status();
  if (blas::is_narrow_float(r.dtype)) return blas::run_narrow(r, views), Status();
  blas::ensure_openblas_kernels();
  blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    Cblas<T>::swap(to_int(r.n), static_cast<T*>(views[x].data), to_int(r.incx), static_cast<T*>(views[y].data),
                   to_int(r.incy));
  });
  return Status();
}

void Operation<Swap>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Rot>::Checked> Operation<Rot>::validate(const Rot& request) { return check_two_vectors(request); }

void Operation<Rot>::operands(const Rot& request, const Checked& checked, Operands& operands) {
  operands.add(blas::exclusive_output(request.x, "x", request.dtype, checked.x_extent))
      .add(blas::exclusive_output(request.y, "y", request.dtype, checked.y_extent));
}

Status Operation<Rot>::run_cpu(const Rot& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (r.n == 0) return Status();
  if (blas::is_narrow_float(r.dtype)) return blas::run_narrow(r, views), Status();
  blas::ensure_openblas_kernels();
  blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    using Part = part_t<T>;
    Cblas<T>::rot(to_int(r.n), static_cast<T*>(views[x].data), to_int(r.incx), static_cast<T*>(views[y].data),
                  to_int(r.incy), static_cast<Part>(r.c), static_cast<Part>(r.s));
  });
  return Status();
}

void Operation<Rot>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Iamin>::Checked> Operation<Iamin>::validate(const Iamin& request) { return check_one_vector(request); }

void Operation<Iamin>::operands(const Iamin& request, const Checked& checked, Operands& operands) {
  operands.typed(request.x, "x", Access::read, request.dtype, checked.x_extent)
      .add(blas::exclusive_output(request.result, "result", DType::i32, 1));
}

Status Operation<Iamin>::run_cpu(const Iamin& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (blas::is_narrow_float(r.dtype)) return blas::run_narrow(r, views), Status();
  blas::ensure_openblas_kernels();
  // As for Iamax: CBLAS counts from 0, the request from 1 (0: empty).
  const std::int32_t index = r.n == 0 ? 0 : blas::with_vector_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    return static_cast<std::int32_t>(
        Cblas<T>::iamin(to_int(r.n), static_cast<const T*>(views[x].data), to_int(r.incx)) + 1);
  });
  store(views[result], index);
  return Status();
}

void Operation<Iamin>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

}  // namespace accel

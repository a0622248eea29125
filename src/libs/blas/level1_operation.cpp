#include "libs/blas/level1_operation.hpp"

#include <cblas.h>

#include <cstring>

#include "libs/blas/blas_checks.hpp"
#include "libs/blas/cpu_gemm.hpp"
#include "libs/blas/openblas_kernels.hpp"

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

// The checks of a request with one vector x (and a result, unless it is Scal).
template <class Request>
Result<blas::VectorChecked<Request>> check_one_vector(const Request& r) {
  constexpr std::string_view name = Request::kName;
  blas::VectorChecked<Request> checked{.request = r};
  ACCEL_RETURN_IF_ERROR(blas::check_real_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "n", r.n));
  ACCEL_ASSIGN_OR_RETURN(checked.x_extent, blas::check_vector(name, "x", r.n, r.incx, /*negative_allowed=*/false));
  return checked;
}

// The checks of a request with vectors x and y.
template <class Request>
Result<blas::VectorChecked<Request>> check_two_vectors(const Request& r) {
  constexpr std::string_view name = Request::kName;
  blas::VectorChecked<Request> checked{.request = r};
  ACCEL_RETURN_IF_ERROR(blas::check_real_dtype(name, r.dtype));
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

}  // namespace

Result<Operation<Axpy>::Checked> Operation<Axpy>::validate(const Axpy& request) { return check_two_vectors(request); }

void Operation<Axpy>::operands(const Axpy& request, const Checked& checked, Operands& operands) {
  operands.typed(request.x, "x", Access::read, request.dtype, checked.x_extent)
      .add(blas::exclusive_output(request.y, "y", request.dtype, checked.y_extent));
}

Status Operation<Axpy>::run_cpu(const Axpy& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (r.n == 0) return Status();
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    Cblas<T>::axpy(to_int(r.n), static_cast<T>(r.alpha), static_cast<const T*>(views[x].data), to_int(r.incx),
                   static_cast<T*>(views[y].data), to_int(r.incy));
  });
  return Status();
}

void Operation<Axpy>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Scal>::Checked> Operation<Scal>::validate(const Scal& request) { return check_one_vector(request); }

void Operation<Scal>::operands(const Scal& request, const Checked& checked, Operands& operands) {
  operands.add(blas::exclusive_output(request.x, "x", request.dtype, checked.x_extent));
}

Status Operation<Scal>::run_cpu(const Scal& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  if (r.n == 0) return Status();
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    Cblas<T>::scal(to_int(r.n), static_cast<T>(r.alpha), static_cast<T*>(views[x].data), to_int(r.incx));
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
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    const T value = r.n == 0 ? T(0)
                             : Cblas<T>::dot(to_int(r.n), static_cast<const T*>(views[x].data), to_int(r.incx),
                                             static_cast<const T*>(views[y].data), to_int(r.incy));
    store(views[result], value);
  });
  return Status();
}

void Operation<Dot>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Nrm2>::Checked> Operation<Nrm2>::validate(const Nrm2& request) { return check_one_vector(request); }

void Operation<Nrm2>::operands(const Nrm2& request, const Checked& checked, Operands& operands) {
  operands.typed(request.x, "x", Access::read, request.dtype, checked.x_extent)
      .add(blas::exclusive_output(request.result, "result", request.dtype, 1));
}

Status Operation<Nrm2>::run_cpu(const Nrm2& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    store(views[result],
          r.n == 0 ? T(0) : Cblas<T>::nrm2(to_int(r.n), static_cast<const T*>(views[x].data), to_int(r.incx)));
  });
  return Status();
}

void Operation<Nrm2>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Asum>::Checked> Operation<Asum>::validate(const Asum& request) { return check_one_vector(request); }

void Operation<Asum>::operands(const Asum& request, const Checked& checked, Operands& operands) {
  operands.typed(request.x, "x", Access::read, request.dtype, checked.x_extent)
      .add(blas::exclusive_output(request.result, "result", request.dtype, 1));
}

Status Operation<Asum>::run_cpu(const Asum& r, const Checked&, std::span<const BufferView> views, const CpuTarget&) {
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    store(views[result],
          r.n == 0 ? T(0) : Cblas<T>::asum(to_int(r.n), static_cast<const T*>(views[x].data), to_int(r.incx)));
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
  blas::ensure_openblas_kernels();
  // CBLAS counts from 0; the request, as BLAS and cuBLAS, from 1 (0: empty).
  const std::int32_t index = r.n == 0 ? 0 : blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
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
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
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
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
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
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    Cblas<T>::rot(to_int(r.n), static_cast<T*>(views[x].data), to_int(r.incx), static_cast<T*>(views[y].data),
                  to_int(r.incy), static_cast<T>(r.c), static_cast<T>(r.s));
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
  blas::ensure_openblas_kernels();
  // As for Iamax: CBLAS counts from 0, the request from 1 (0: empty).
  const std::int32_t index = r.n == 0 ? 0 : blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    return static_cast<std::int32_t>(
        Cblas<T>::iamin(to_int(r.n), static_cast<const T*>(views[x].data), to_int(r.incx)) + 1);
  });
  store(views[result], index);
  return Status();
}

void Operation<Iamin>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

}  // namespace accel

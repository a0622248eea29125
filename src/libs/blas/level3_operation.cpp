#include "libs/blas/level3_operation.hpp"

#include <cblas.h>

#include "libs/blas/blas_checks.hpp"
#include "libs/blas/cpu_gemm.hpp"
#include "libs/blas/openblas_kernels.hpp"

namespace accel {
namespace {

using blas::Geam;
using blas::Symm;
using blas::Syrk;
using blas::Trmm;
using blas::Trsm;

// OpenBLAS's level-3 routines of each element type.
template <class T>
struct Cblas3;
template <>
struct Cblas3<float> {
  static constexpr auto trsm = &cblas_strsm;
  static constexpr auto syrk = &cblas_ssyrk;
  static constexpr auto symm = &cblas_ssymm;
  static constexpr auto trmm = &cblas_strmm;
};
template <>
struct Cblas3<double> {
  static constexpr auto trsm = &cblas_dtrsm;
  static constexpr auto syrk = &cblas_dsyrk;
  static constexpr auto symm = &cblas_dsymm;
  static constexpr auto trmm = &cblas_dtrmm;
};

CBLAS_SIDE to_cblas(blas::Side side) { return side == blas::Side::left ? CblasLeft : CblasRight; }
CBLAS_DIAG to_cblas(blas::Diagonal diagonal) { return diagonal == blas::Diagonal::unit ? CblasUnit : CblasNonUnit; }
blasint to_blasint(std::int64_t value) { return static_cast<blasint>(value); }  // validated to fit

// C = alpha op(A) + beta op(B) for one m x n C; a term scaled by 0 is not read.
template <class T>
void geam(const Geam& r, const T* a, const T* b, T* c) {
  const bool ta = r.transpose_a == Transpose::transpose, tb = r.transpose_b == Transpose::transpose;
  const T alpha = static_cast<T>(r.alpha), beta = static_cast<T>(r.beta);
  for (std::int64_t j = 0; j < r.n; ++j)
    for (std::int64_t i = 0; i < r.m; ++i) {
      const T from_a = alpha == T(0) ? T(0) : alpha * (ta ? a[i * r.lda + j] : a[j * r.lda + i]);
      const T from_b = beta == T(0) ? T(0) : beta * (tb ? b[i * r.ldb + j] : b[j * r.ldb + i]);
      c[j * r.ldc + i] = from_a + from_b;
    }
}

CBLAS_UPLO to_cblas(blas::Fill fill) { return fill == blas::Fill::lower ? CblasLower : CblasUpper; }
CBLAS_TRANSPOSE to_cblas(Transpose transpose) { return transpose == Transpose::none ? CblasNoTrans : CblasTrans; }

// Trsm and Trmm: a triangular A (m x m on the left of B, n x n on its right) and B, m x n, read and written.
template <class Request>
Result<blas::MatricesChecked<Request>> validate_triangular(const Request& request) {
  constexpr std::string_view name = Request::kName;
  blas::MatricesChecked<Request> checked{.request = request};
  Request& r = checked.request;  // check_matrices resolves packed leading dimensions and strides in place
  ACCEL_RETURN_IF_ERROR(blas::check_real_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(blas::check_side(name, r.side));
  ACCEL_RETURN_IF_ERROR(blas::check_fill(name, r.fill));
  ACCEL_RETURN_IF_ERROR(blas::check_transpose(name, r.transpose));
  ACCEL_RETURN_IF_ERROR(blas::check_diagonal(name, r.diagonal));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(blas::check_batch(name, r.batch));
  const std::int64_t order = r.side == blas::Side::left ? r.m : r.n;
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, blas::check_matrices(name, "a", order, order, r.batch, r.lda, r.stride_a,
                                                                /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(checked.written_extent,
                         blas::check_matrices(name, "b", r.m, r.n, r.batch, r.ldb, r.stride_b, /*written=*/true));
  return checked;
}

template <class Request>
void triangular_operands(const Request& request, const blas::MatricesChecked<Request>& checked, Operands& operands) {
  const DType dtype = checked.request.dtype;
  operands.typed(request.a, "a", Access::read, dtype, checked.a_extent)
      .add(blas::exclusive_output(request.b, "b", dtype, checked.written_extent));
}

}  // namespace

Result<Operation<Trsm>::Checked> Operation<Trsm>::validate(const Trsm& request) { return validate_triangular(request); }

void Operation<Trsm>::operands(const Trsm& request, const Checked& checked, Operands& operands) {
  triangular_operands(request, checked, operands);
}

Status Operation<Trsm>::run_cpu(const Trsm&, const Checked& checked, std::span<const BufferView> views,
                                const CpuTarget&) {
  const Trsm& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    for (std::int64_t i = 0; i < r.batch; ++i) {
      Cblas3<T>::trsm(CblasColMajor, to_cblas(r.side), to_cblas(r.fill), to_cblas(r.transpose), to_cblas(r.diagonal),
                      static_cast<blasint>(r.m), static_cast<blasint>(r.n), static_cast<T>(r.alpha),
                      blas::batch_member<const T>(views[a].data, i, r.stride_a), static_cast<blasint>(r.lda),
                      blas::batch_member<T>(views[b].data, i, r.stride_b), static_cast<blasint>(r.ldb));
    }
  });
  return Status();
}

void Operation<Trsm>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Syrk>::Checked> Operation<Syrk>::validate(const Syrk& request) {
  constexpr std::string_view name = Syrk::kName;
  Checked checked{.request = request};
  Syrk& r = checked.request;
  ACCEL_RETURN_IF_ERROR(blas::check_real_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(blas::check_fill(name, r.fill));
  ACCEL_RETURN_IF_ERROR(blas::check_transpose(name, r.transpose));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "k", r.k));
  ACCEL_RETURN_IF_ERROR(blas::check_batch(name, r.batch));
  const bool transposed = r.transpose == Transpose::transpose;
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent,
                         blas::check_matrices(name, "a", transposed ? r.k : r.n, transposed ? r.n : r.k, r.batch, r.lda,
                                              r.stride_a, /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(checked.written_extent,
                         blas::check_matrices(name, "c", r.n, r.n, r.batch, r.ldc, r.stride_c, /*written=*/true));
  return checked;
}

void Operation<Syrk>::operands(const Syrk& request, const Checked& checked, Operands& operands) {
  const DType dtype = checked.request.dtype;
  operands.typed(request.a, "a", Access::read, dtype, checked.a_extent)
      .add(blas::exclusive_output(request.c, "c", dtype, checked.written_extent));
}

Status Operation<Syrk>::run_cpu(const Syrk&, const Checked& checked, std::span<const BufferView> views,
                                const CpuTarget&) {
  const Syrk& r = checked.request;
  if (r.n == 0) return Status();
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    for (std::int64_t i = 0; i < r.batch; ++i) {
      Cblas3<T>::syrk(CblasColMajor, to_cblas(r.fill), to_cblas(r.transpose), static_cast<blasint>(r.n),
                      static_cast<blasint>(r.k), static_cast<T>(r.alpha),
                      blas::batch_member<const T>(views[a].data, i, r.stride_a), static_cast<blasint>(r.lda),
                      static_cast<T>(r.beta), blas::batch_member<T>(views[c].data, i, r.stride_c),
                      static_cast<blasint>(r.ldc));
    }
  });
  return Status();
}

void Operation<Syrk>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Symm>::Checked> Operation<Symm>::validate(const Symm& request) {
  constexpr std::string_view name = Symm::kName;
  Checked checked{.request = request};
  Symm& r = checked.request;
  ACCEL_RETURN_IF_ERROR(blas::check_real_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(blas::check_side(name, r.side));
  ACCEL_RETURN_IF_ERROR(blas::check_fill(name, r.fill));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(blas::check_batch(name, r.batch));
  const std::int64_t order = r.side == blas::Side::left ? r.m : r.n;
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, blas::check_matrices(name, "a", order, order, r.batch, r.lda, r.stride_a,
                                                                /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(checked.b_extent,
                         blas::check_matrices(name, "b", r.m, r.n, r.batch, r.ldb, r.stride_b, /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(checked.c_extent,
                         blas::check_matrices(name, "c", r.m, r.n, r.batch, r.ldc, r.stride_c, /*written=*/true));
  return checked;
}

void Operation<Symm>::operands(const Symm& request, const Checked& checked, Operands& operands) {
  const DType dtype = checked.request.dtype;
  operands.typed(request.a, "a", Access::read, dtype, checked.a_extent)
      .typed(request.b, "b", Access::read, dtype, checked.b_extent)
      .add(blas::exclusive_output(request.c, "c", dtype, checked.c_extent));
}

Status Operation<Symm>::run_cpu(const Symm&, const Checked& checked, std::span<const BufferView> views,
                                const CpuTarget&) {
  const Symm& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    for (std::int64_t i = 0; i < r.batch; ++i) {
      Cblas3<T>::symm(CblasColMajor, to_cblas(r.side), to_cblas(r.fill), to_blasint(r.m), to_blasint(r.n),
                      static_cast<T>(r.alpha), blas::batch_member<const T>(views[a].data, i, r.stride_a),
                      to_blasint(r.lda), blas::batch_member<const T>(views[b].data, i, r.stride_b), to_blasint(r.ldb),
                      static_cast<T>(r.beta), blas::batch_member<T>(views[c].data, i, r.stride_c), to_blasint(r.ldc));
    }
  });
  return Status();
}

void Operation<Symm>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Trmm>::Checked> Operation<Trmm>::validate(const Trmm& request) { return validate_triangular(request); }

void Operation<Trmm>::operands(const Trmm& request, const Checked& checked, Operands& operands) {
  triangular_operands(request, checked, operands);
}

Status Operation<Trmm>::run_cpu(const Trmm&, const Checked& checked, std::span<const BufferView> views,
                                const CpuTarget&) {
  const Trmm& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    for (std::int64_t i = 0; i < r.batch; ++i) {
      Cblas3<T>::trmm(CblasColMajor, to_cblas(r.side), to_cblas(r.fill), to_cblas(r.transpose), to_cblas(r.diagonal),
                      to_blasint(r.m), to_blasint(r.n), static_cast<T>(r.alpha),
                      blas::batch_member<const T>(views[a].data, i, r.stride_a), to_blasint(r.lda),
                      blas::batch_member<T>(views[b].data, i, r.stride_b), to_blasint(r.ldb));
    }
  });
  return Status();
}

void Operation<Trmm>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Geam>::Checked> Operation<Geam>::validate(const Geam& request) {
  constexpr std::string_view name = Geam::kName;
  Checked checked{.request = request};
  Geam& r = checked.request;
  ACCEL_RETURN_IF_ERROR(blas::check_real_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(blas::check_transpose(name, r.transpose_a));
  ACCEL_RETURN_IF_ERROR(blas::check_transpose(name, r.transpose_b));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(blas::check_batch(name, r.batch));
  const bool ta = r.transpose_a == Transpose::transpose, tb = r.transpose_b == Transpose::transpose;
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, blas::check_matrices(name, "a", ta ? r.n : r.m, ta ? r.m : r.n, r.batch,
                                                                r.lda, r.stride_a, /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(checked.b_extent, blas::check_matrices(name, "b", tb ? r.n : r.m, tb ? r.m : r.n, r.batch,
                                                                r.ldb, r.stride_b, /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(checked.c_extent,
                         blas::check_matrices(name, "c", r.m, r.n, r.batch, r.ldc, r.stride_c, /*written=*/true));
  return checked;
}

void Operation<Geam>::operands(const Geam& request, const Checked& checked, Operands& operands) {
  const DType dtype = checked.request.dtype;
  operands.typed(request.a, "a", Access::read, dtype, checked.a_extent)
      .typed(request.b, "b", Access::read, dtype, checked.b_extent)
      .add(blas::exclusive_output(request.c, "c", dtype, checked.c_extent));
}

Status Operation<Geam>::run_cpu(const Geam&, const Checked& checked, std::span<const BufferView> views,
                                const CpuTarget&) {
  const Geam& r = checked.request;
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    for (std::int64_t i = 0; i < r.batch; ++i) {
      geam<T>(r, blas::batch_member<const T>(views[a].data, i, r.stride_a),
              blas::batch_member<const T>(views[b].data, i, r.stride_b),
              blas::batch_member<T>(views[c].data, i, r.stride_c));
    }
  });
  return Status();
}

void Operation<Geam>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

}  // namespace accel

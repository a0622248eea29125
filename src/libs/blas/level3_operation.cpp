#include "libs/blas/level3_operation.hpp"

#include <cblas.h>

#include "libs/blas/blas_checks.hpp"
#include "libs/blas/cpu_gemm.hpp"
#include "libs/blas/openblas_kernels.hpp"

namespace accel {
namespace {

using blas::Syrk;
using blas::Trsm;

template <class T>
constexpr auto cblas_trsm() {
  if constexpr (std::is_same_v<T, double>) {
    return &cblas_dtrsm;
  } else {
    return &cblas_strsm;
  }
}
template <class T>
constexpr auto cblas_syrk() {
  if constexpr (std::is_same_v<T, double>) {
    return &cblas_dsyrk;
  } else {
    return &cblas_ssyrk;
  }
}

CBLAS_UPLO to_cblas(blas::Fill fill) { return fill == blas::Fill::lower ? CblasLower : CblasUpper; }
CBLAS_TRANSPOSE to_cblas(Transpose transpose) { return transpose == Transpose::none ? CblasNoTrans : CblasTrans; }

}  // namespace

Result<Operation<Trsm>::Checked> Operation<Trsm>::validate(const Trsm& request) {
  constexpr std::string_view name = Trsm::kName;
  Checked checked{.request = request};
  Trsm& r = checked.request;
  ACCEL_RETURN_IF_ERROR(blas::check_real_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(blas::check_side(name, r.side));
  ACCEL_RETURN_IF_ERROR(blas::check_fill(name, r.fill));
  ACCEL_RETURN_IF_ERROR(blas::check_transpose(name, r.transpose));
  ACCEL_RETURN_IF_ERROR(blas::check_diagonal(name, r.diagonal));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(blas::check_batch(name, r.batch));
  // A is m x m on the left of X, n x n on its right.
  const std::int64_t order = r.side == blas::Side::left ? r.m : r.n;
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, blas::check_matrices(name, "a", order, order, r.batch, r.lda, r.stride_a,
                                                                /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(checked.written_extent,
                         blas::check_matrices(name, "b", r.m, r.n, r.batch, r.ldb, r.stride_b, /*written=*/true));
  return checked;
}

void Operation<Trsm>::operands(const Trsm& request, const Checked& checked, Operands& operands) {
  const DType dtype = checked.request.dtype;
  operands.typed(request.a, "a", Access::read, dtype, checked.a_extent)
      .add(blas::exclusive_output(request.b, "b", dtype, checked.written_extent));
}

Status Operation<Trsm>::run_cpu(const Trsm&, const Checked& checked, std::span<const BufferView> views,
                                const CpuTarget&) {
  const Trsm& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    for (std::int64_t i = 0; i < r.batch; ++i) {
      cblas_trsm<T>()(CblasColMajor, r.side == blas::Side::left ? CblasLeft : CblasRight, to_cblas(r.fill),
                      to_cblas(r.transpose), r.diagonal == blas::Diagonal::unit ? CblasUnit : CblasNonUnit,
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
      cblas_syrk<T>()(CblasColMajor, to_cblas(r.fill), to_cblas(r.transpose), static_cast<blasint>(r.n),
                      static_cast<blasint>(r.k), static_cast<T>(r.alpha),
                      blas::batch_member<const T>(views[a].data, i, r.stride_a), static_cast<blasint>(r.lda),
                      static_cast<T>(r.beta), blas::batch_member<T>(views[c].data, i, r.stride_c),
                      static_cast<blasint>(r.ldc));
    }
  });
  return Status();
}

void Operation<Syrk>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

}  // namespace accel

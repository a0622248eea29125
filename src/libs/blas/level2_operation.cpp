#include "libs/blas/level2_operation.hpp"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "libs/blas/blas_checks.hpp"
#include "libs/blas/cpu_gemm.hpp"
#include "libs/blas/narrow_floats.hpp"
#include "libs/blas/openblas_kernels.hpp"

namespace accel {
namespace {

using blas::Gemv;
using blas::Ger;
using blas::Symv;
using blas::Trsv;

template <class T>
constexpr auto cblas_gemv() {
  if constexpr (std::is_same_v<T, double>) {
    return &cblas_dgemv;
  } else {
    return &cblas_sgemv;
  }
}

template <class T>
struct Cblas2;
template <>
struct Cblas2<float> {
  static constexpr auto ger = &cblas_sger;
  static constexpr auto trsv = &cblas_strsv;
  static constexpr auto symv = &cblas_ssymv;
};
template <>
struct Cblas2<double> {
  static constexpr auto ger = &cblas_dger;
  static constexpr auto trsv = &cblas_dtrsv;
  static constexpr auto symv = &cblas_dsymv;
};

CBLAS_UPLO to_cblas(blas::Fill fill) { return fill == blas::Fill::upper ? CblasUpper : CblasLower; }
CBLAS_TRANSPOSE to_cblas(Transpose transpose) { return transpose == Transpose::transpose ? CblasTrans : CblasNoTrans; }
CBLAS_DIAG to_cblas(blas::Diagonal diagonal) { return diagonal == blas::Diagonal::unit ? CblasUnit : CblasNonUnit; }
blasint to_blasint(std::int64_t value) { return static_cast<blasint>(value); }  // validated to fit

// The checks Trsv and Symv share: a square A of order n (whose `fill` triangle is read) and x of n elements, written
// when `x_written`.
template <class Request>
Result<blas::Level2Checked<Request>> check_square(const Request& request, bool x_written) {
  constexpr std::string_view name = Request::kName;
  blas::Level2Checked<Request> checked{.request = request};
  Request& r = checked.request;
  ACCEL_RETURN_IF_ERROR(blas::check_real_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(blas::check_fill(name, r.fill));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(blas::check_batch(name, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent,
                         blas::check_matrices(name, "a", r.n, r.n, r.batch, r.lda, r.stride_a, /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t x_one,
                         blas::check_vector(name, "x", r.n, r.incx, /*negative_allowed=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.x_extent, blas::check_vector_batch(name, "x", x_one, r.batch, r.stride_x, x_written));
  return checked;
}

// y = beta y over a vector's span, for a product with nothing to sum; beta = 0 overwrites (NaNs do not survive), as
// BLAS's beta does.
template <class T>
void scale_vector(T* y, std::int64_t length, std::int64_t inc, T beta) {
  const std::int64_t step = inc < 0 ? -inc : inc;
  for (std::int64_t i = 0; i < length; ++i) y[i * step] = beta == T(0) ? T(0) : beta * y[i * step];
}

// Gemv on f16 or bf16, where cblas has no routine: each sum in double (a transposed one's chunks by EightSums), y's
// element rounded once (cuBLAS's HSH and TST gemv sum in f32 and round at the end); beta = 0 does not read y, and an
// empty product leaves beta y. A's columns are read whole, a chunk widened at a time: down a column for the transpose
// (an element of y each), across the columns into every row's sum otherwise, so that no sum strides across A
// (PERFORMANCE.md §94).
template <class N>
void narrow_gemv(const Operation<Gemv>::Checked& checked, std::span<const BufferView> views) {
  using Op = Operation<Gemv>;
  const Gemv& r = checked.request;
  const bool transposed = r.transpose == Transpose::transpose;
  std::vector<float> xs(static_cast<std::size_t>(checked.x_length));
  std::vector<double> sums(static_cast<std::size_t>(checked.y_length));
  float column[blas::kChunk];
  for (std::int64_t b = 0; b < r.batch; ++b) {
    const N* a = blas::batch_member<const N>(views[Op::a].data, b, r.stride_a);
    const blas::Strided<const N> x{blas::batch_member<const N>(views[Op::x].data, b, r.stride_x), checked.x_length,
                                   r.incx};
    const blas::Strided<N> y{blas::batch_member<N>(views[Op::y].data, b, r.stride_y), checked.y_length, r.incy};
    blas::for_each_chunk(checked.x_length,
                         [&](std::int64_t first, std::int64_t count) { blas::widen(x, first, count, &xs[first]); });
    std::fill(sums.begin(), sums.end(), 0.0);
    // Column j of A, a chunk at a time: sums[j] (transposed) or sums[first..] (plain) gain its terms.
    for (std::int64_t j = 0; j < (transposed ? checked.y_length : checked.x_length); ++j) {
      const blas::Strided<const N> a_column{a + j * r.lda, transposed ? checked.x_length : checked.y_length, 1};
      blas::for_each_chunk(a_column.n, [&](std::int64_t first, std::int64_t count) {
        blas::widen(a_column, first, count, column);
        if (transposed) {
          blas::EightSums sum;
          blas::add_products(sum, column, &xs[static_cast<std::size_t>(first)], count);
          sums[static_cast<std::size_t>(j)] += sum.total();
        } else {
          const double xj = xs[static_cast<std::size_t>(j)];
          for (std::int64_t k = 0; k < count; ++k) sums[first + k] += static_cast<double>(column[k]) * xj;
        }
      });
    }
    for (std::int64_t j = 0; j < checked.y_length; ++j) {
      const double kept = r.beta == 0 ? 0.0 : r.beta * y.value(j);
      y[j] = blas::narrow<N>(static_cast<float>(r.alpha * sums[static_cast<std::size_t>(j)] + kept));
    }
  }
}

}  // namespace

Result<Operation<Gemv>::Checked> Operation<Gemv>::validate(const Gemv& request) {
  constexpr std::string_view name = Gemv::kName;
  Checked checked{.request = request};
  Gemv& r = checked.request;
  ACCEL_RETURN_IF_ERROR(blas::check_float_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(blas::check_transpose(name, r.transpose));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(blas::check_batch(name, r.batch));
  const bool transposed = r.transpose == Transpose::transpose;
  checked.x_length = transposed ? r.m : r.n;
  checked.y_length = transposed ? r.n : r.m;
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent,
                         blas::check_matrices(name, "a", r.m, r.n, r.batch, r.lda, r.stride_a, /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t x_one,
                         blas::check_vector(name, "x", checked.x_length, r.incx, /*negative_allowed=*/true));
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t y_one,
                         blas::check_vector(name, "y", checked.y_length, r.incy, /*negative_allowed=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.x_extent,
                         blas::check_vector_batch(name, "x", x_one, r.batch, r.stride_x, /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(checked.y_extent,
                         blas::check_vector_batch(name, "y", y_one, r.batch, r.stride_y, /*written=*/true));
  return checked;
}

void Operation<Gemv>::operands(const Gemv& request, const Checked& checked, Operands& operands) {
  const DType dtype = checked.request.dtype;
  operands.typed(request.a, "a", Access::read, dtype, checked.a_extent)
      .typed(request.x, "x", Access::read, dtype, checked.x_extent)
      .add(blas::exclusive_output(request.y, "y", dtype, checked.y_extent));
}

Status Operation<Gemv>::run_cpu(const Gemv&, const Checked& checked, std::span<const BufferView> views,
                                const CpuTarget&) {
  const Gemv& r = checked.request;
  if (checked.y_length == 0) return Status();
  if (blas::is_narrow_float(r.dtype)) {
    blas::with_narrow_type(r.dtype, [&]<class N>(std::type_identity<N>) { narrow_gemv<N>(checked, views); });
    return Status();
  }
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    for (std::int64_t i = 0; i < r.batch; ++i) {
      T* y = blas::batch_member<T>(views[Slot::y].data, i, r.stride_y);
      if (checked.x_length == 0) {
        scale_vector(y, checked.y_length, r.incy, static_cast<T>(r.beta));
        continue;
      }
      cblas_gemv<T>()(CblasColMajor, r.transpose == Transpose::transpose ? CblasTrans : CblasNoTrans,
                      static_cast<blasint>(r.m), static_cast<blasint>(r.n), static_cast<T>(r.alpha),
                      blas::batch_member<const T>(views[Slot::a].data, i, r.stride_a), static_cast<blasint>(r.lda),
                      blas::batch_member<const T>(views[Slot::x].data, i, r.stride_x), static_cast<blasint>(r.incx),
                      static_cast<T>(r.beta), y, static_cast<blasint>(r.incy));
    }
  });
  return Status();
}

void Operation<Gemv>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Ger>::Checked> Operation<Ger>::validate(const Ger& request) {
  constexpr std::string_view name = Ger::kName;
  Checked checked{.request = request};
  Ger& r = checked.request;
  ACCEL_RETURN_IF_ERROR(blas::check_real_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(blas::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(blas::check_batch(name, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent,
                         blas::check_matrices(name, "a", r.m, r.n, r.batch, r.lda, r.stride_a, /*written=*/true));
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t x_one,
                         blas::check_vector(name, "x", r.m, r.incx, /*negative_allowed=*/true));
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t y_one,
                         blas::check_vector(name, "y", r.n, r.incy, /*negative_allowed=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.x_extent,
                         blas::check_vector_batch(name, "x", x_one, r.batch, r.stride_x, /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(checked.y_extent,
                         blas::check_vector_batch(name, "y", y_one, r.batch, r.stride_y, /*written=*/false));
  return checked;
}

void Operation<Ger>::operands(const Ger& request, const Checked& checked, Operands& operands) {
  const DType dtype = checked.request.dtype;
  operands.add(blas::exclusive_output(request.a, "a", dtype, checked.a_extent))
      .typed(request.x, "x", Access::read, dtype, checked.x_extent)
      .typed(request.y, "y", Access::read, dtype, checked.y_extent);
}

Status Operation<Ger>::run_cpu(const Ger&, const Checked& checked, std::span<const BufferView> views,
                               const CpuTarget&) {
  const Ger& r = checked.request;
  if (r.m == 0 || r.n == 0) return Status();
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    for (std::int64_t i = 0; i < r.batch; ++i) {
      Cblas2<T>::ger(CblasColMajor, to_blasint(r.m), to_blasint(r.n), static_cast<T>(r.alpha),
                     blas::batch_member<const T>(views[Slot::x].data, i, r.stride_x), to_blasint(r.incx),
                     blas::batch_member<const T>(views[Slot::y].data, i, r.stride_y), to_blasint(r.incy),
                     blas::batch_member<T>(views[Slot::a].data, i, r.stride_a), to_blasint(r.lda));
    }
  });
  return Status();
}

void Operation<Ger>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Trsv>::Checked> Operation<Trsv>::validate(const Trsv& request) {
  ACCEL_RETURN_IF_ERROR(blas::check_transpose(Trsv::kName, request.transpose));
  ACCEL_RETURN_IF_ERROR(blas::check_diagonal(Trsv::kName, request.diagonal));
  return check_square(request, /*x_written=*/true);
}

void Operation<Trsv>::operands(const Trsv& request, const Checked& checked, Operands& operands) {
  const DType dtype = checked.request.dtype;
  operands.typed(request.a, "a", Access::read, dtype, checked.a_extent)
      .add(blas::exclusive_output(request.x, "x", dtype, checked.x_extent));
}

Status Operation<Trsv>::run_cpu(const Trsv&, const Checked& checked, std::span<const BufferView> views,
                                const CpuTarget&) {
  const Trsv& r = checked.request;
  if (r.n == 0) return Status();
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    for (std::int64_t i = 0; i < r.batch; ++i) {
      Cblas2<T>::trsv(CblasColMajor, to_cblas(r.fill), to_cblas(r.transpose), to_cblas(r.diagonal), to_blasint(r.n),
                      blas::batch_member<const T>(views[Slot::a].data, i, r.stride_a), to_blasint(r.lda),
                      blas::batch_member<T>(views[Slot::x].data, i, r.stride_x), to_blasint(r.incx));
    }
  });
  return Status();
}

void Operation<Trsv>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

Result<Operation<Symv>::Checked> Operation<Symv>::validate(const Symv& request) {
  ACCEL_ASSIGN_OR_RETURN(Checked checked, check_square(request, /*x_written=*/false));
  Symv& r = checked.request;
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t y_one,
                         blas::check_vector(Symv::kName, "y", r.n, r.incy, /*negative_allowed=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.y_extent,
                         blas::check_vector_batch(Symv::kName, "y", y_one, r.batch, r.stride_y, /*written=*/true));
  return checked;
}

void Operation<Symv>::operands(const Symv& request, const Checked& checked, Operands& operands) {
  const DType dtype = checked.request.dtype;
  operands.typed(request.a, "a", Access::read, dtype, checked.a_extent)
      .typed(request.x, "x", Access::read, dtype, checked.x_extent)
      .add(blas::exclusive_output(request.y, "y", dtype, checked.y_extent));
}

Status Operation<Symv>::run_cpu(const Symv&, const Checked& checked, std::span<const BufferView> views,
                                const CpuTarget&) {
  const Symv& r = checked.request;
  if (r.n == 0) return Status();
  blas::ensure_openblas_kernels();
  blas::with_real_type(r.dtype, [&]<class T>(std::type_identity<T>) {
    for (std::int64_t i = 0; i < r.batch; ++i) {
      Cblas2<T>::symv(CblasColMajor, to_cblas(r.fill), to_blasint(r.n), static_cast<T>(r.alpha),
                      blas::batch_member<const T>(views[Slot::a].data, i, r.stride_a), to_blasint(r.lda),
                      blas::batch_member<const T>(views[Slot::x].data, i, r.stride_x), to_blasint(r.incx),
                      static_cast<T>(r.beta), blas::batch_member<T>(views[Slot::y].data, i, r.stride_y),
                      to_blasint(r.incy));
    }
  });
  return Status();
}

void Operation<Symv>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

}  // namespace accel

#include "libs/sparse/dense_to_csr_operation.hpp"

#include <fmt/format.h>

namespace accel {

using sparse::DenseToCsr;
using sparse::DenseToCsrCount;

namespace {

// Element (i, j) of a dense matrix whose leading dimension was resolved.
template <class T>
T element(const sparse::DenseMatrix& d, const void* data, std::int64_t i, std::int64_t j) {
  const std::int64_t at = d.order == MatrixOrder::column_major ? j * d.ld + i : i * d.ld + j;
  return static_cast<const T*>(data)[at];
}

// The CSR of `d`'s nonzeros: offsets always, indices and values where given (nnz each).
template <class T, class I>
void scan(const sparse::DenseMatrix& d, const void* data, I* offsets, I* indices, T* values) {
  I nnz = 0;
  offsets[0] = 0;
  for (std::int64_t i = 0; i < d.rows; ++i) {
    for (std::int64_t j = 0; j < d.cols; ++j) {
      const T v = element<T>(d, data, i, j);
      if (v == T(0)) continue;
      if (indices != nullptr) {
        indices[nnz] = static_cast<I>(j);
        values[nnz] = v;
      }
      ++nnz;
    }
    offsets[i + 1] = nnz;
  }
}

template <class F>
void dispatch(DType dtype, DType index, F&& f) {
  const bool wide = index == DType::i64;
  if (dtype == DType::f64) {
    wide ? f(double{}, std::int64_t{}) : f(double{}, std::int32_t{});
  } else {
    wide ? f(float{}, std::int64_t{}) : f(float{}, std::int32_t{});
  }
}

std::int64_t nonzeros(const sparse::DenseMatrix& d, DType dtype, const void* data) {
  std::int64_t nnz = 0;
  dispatch(dtype, DType::i32, [&]<class T, class I>(T, I) {
    for (std::int64_t i = 0; i < d.rows; ++i)
      for (std::int64_t j = 0; j < d.cols; ++j) nnz += element<T>(d, data, i, j) != T(0);
  });
  return nnz;
}

}  // namespace

Result<Operation<DenseToCsrCount>::Checked> Operation<DenseToCsrCount>::validate(const DenseToCsrCount& request) {
  constexpr std::string_view name = DenseToCsrCount::kName;
  Checked checked{.request = request};
  // The CSR it counts for, as a matrix: its types and shape are checked as any sparse matrix's.
  const sparse::Matrix csr{
      .index = request.index, .dtype = request.dtype, .rows = request.a.rows, .cols = request.a.cols};
  ACCEL_RETURN_IF_ERROR(sparse::check_matrix(name, "the CSR", csr, sparse::Values::single_double));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent,
                         sparse::check_dense(name, "a", checked.request.a, request.a.rows, request.a.cols));
  return checked;
}

void Operation<DenseToCsrCount>::operands(const DenseToCsrCount& request, const Checked& checked, Operands& operands) {
  sparse::read_dense(operands, request.a.data, "a", request.dtype, checked.a_extent);
  sparse::write_dense(operands, request.offsets, "offsets", request.index,
                      static_cast<std::uint64_t>(request.a.rows + 1));
}

Status Operation<DenseToCsrCount>::run_cpu(const DenseToCsrCount&, const Checked& checked,
                                           std::span<const BufferView> views, const CpuTarget&) {
  const DenseToCsrCount& r = checked.request;
  dispatch(r.dtype, r.index, [&]<class T, class I>(T, I) {
    scan<T, I>(r.a, views[a].data, static_cast<I*>(views[offsets].data), nullptr, nullptr);
  });
  return Status();
}

Result<Operation<DenseToCsr>::Checked> Operation<DenseToCsr>::validate(const DenseToCsr& request) {
  constexpr std::string_view name = DenseToCsr::kName;
  Checked checked{.request = request};
  ACCEL_RETURN_IF_ERROR(sparse::check_matrix(name, "out", request.out, sparse::Values::single_double));
  ACCEL_RETURN_IF_ERROR(sparse::check_format(name, "out", request.out, sparse::Format::csr));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent,
                         sparse::check_dense(name, "a", checked.request.a, request.out.rows, request.out.cols));
  return checked;
}

void Operation<DenseToCsr>::operands(const DenseToCsr& request, const Checked& checked, Operands& operands) {
  sparse::read_dense(operands, request.a.data, "a", request.out.dtype, checked.a_extent);
  sparse::write_matrix(operands, request.out, "out");
}

Status Operation<DenseToCsr>::run_cpu(const DenseToCsr&, const Checked& checked, std::span<const BufferView> views,
                                      const CpuTarget&) {
  const DenseToCsr& r = checked.request;
  ACCEL_RETURN_IF_ERROR(sparse::check_output_nnz(DenseToCsr::kName, "out", r.out.nnz,
                                                 nonzeros(r.a, r.out.dtype, views[a].data), DenseToCsrCount::kName));
  dispatch(r.out.dtype, r.out.index, [&]<class T, class I>(T, I) {
    scan<T, I>(r.a, views[a].data, static_cast<I*>(views[offsets].data), static_cast<I*>(views[indices].data),
               static_cast<T*>(views[values].data));
  });
  return Status();
}

}  // namespace accel

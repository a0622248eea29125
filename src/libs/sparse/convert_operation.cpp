#include "libs/sparse/convert_operation.hpp"

#include <algorithm>

#include "libs/sparse/eigen_sparse.hpp"

namespace accel {

using sparse::CooToCsr;
using sparse::CsrToCoo;
using sparse::ToDense;

namespace {

// Row i of each entry of a well-formed CSR.
template <class I>
void expand_rows(std::int64_t rows, const I* offsets, I* out) {
  for (std::int64_t i = 0; i < rows; ++i) std::fill(out + offsets[i], out + offsets[i + 1], static_cast<I>(i));
}

// The CSR offsets of the sorted rows of a well-formed COO: where each row's entries begin.
template <class I>
void compress_rows(std::int64_t rows, std::int64_t nnz, const I* coo_rows, I* out) {
  for (std::int64_t i = 0; i <= rows; ++i)
    out[i] = static_cast<I>(std::lower_bound(coo_rows, coo_rows + nnz, static_cast<I>(i)) - coo_rows);
}

}  // namespace

Result<Operation<ToDense>::Checked> Operation<ToDense>::validate(const ToDense& request) {
  Checked checked{.request = request};
  ACCEL_RETURN_IF_ERROR(sparse::check_matrix(ToDense::kName, "a", request.a, sparse::Values::single_double));
  ACCEL_ASSIGN_OR_RETURN(checked.out_extent, sparse::check_dense(ToDense::kName, "out", checked.request.out,
                                                                 request.a.rows, request.a.cols));
  return checked;
}

void Operation<ToDense>::operands(const ToDense& request, const Checked& checked, Operands& operands) {
  sparse::read_matrix(operands, request.a, "a");
  sparse::write_dense(operands, request.out.data, "out", request.a.dtype, checked.out_extent);
}

Status Operation<ToDense>::run_cpu(const ToDense& request, const Checked& checked, std::span<const BufferView> views,
                                   const CpuTarget&) {
  ACCEL_RETURN_IF_ERROR(sparse::check_host_structure(ToDense::kName, "a", request.a, views[offsets], views[indices]));
  return sparse::eigen_to_dense(checked.request, views);
}

void Operation<ToDense>::describe_cpu(LibraryReport& report) { report.report(sparse::eigen_library()); }

Result<CsrToCoo> Operation<CsrToCoo>::validate(const CsrToCoo& request) {
  ACCEL_RETURN_IF_ERROR(sparse::check_matrix(CsrToCoo::kName, "csr", request.csr, sparse::Values::with_half));
  ACCEL_RETURN_IF_ERROR(sparse::check_format(CsrToCoo::kName, "csr", request.csr, sparse::Format::csr));
  return request;
}

void Operation<CsrToCoo>::operands(const CsrToCoo& request, const Checked&, Operands& operands) {
  sparse::read_matrix(operands, request.csr, "csr");
  sparse::write_dense(operands, request.rows, "rows", request.csr.index, static_cast<std::uint64_t>(request.csr.nnz));
}

Status Operation<CsrToCoo>::run_cpu(const CsrToCoo& request, const Checked&, std::span<const BufferView> views,
                                    const CpuTarget&) {
  const sparse::Matrix& m = request.csr;
  ACCEL_RETURN_IF_ERROR(sparse::check_host_structure(CsrToCoo::kName, "csr", m, views[offsets], views[indices]));
  if (m.index == DType::i64) {
    expand_rows(m.rows, static_cast<const std::int64_t*>(views[offsets].data),
                static_cast<std::int64_t*>(views[rows].data));
  } else {
    expand_rows(m.rows, static_cast<const std::int32_t*>(views[offsets].data),
                static_cast<std::int32_t*>(views[rows].data));
  }
  return Status();
}

Result<CooToCsr> Operation<CooToCsr>::validate(const CooToCsr& request) {
  ACCEL_RETURN_IF_ERROR(sparse::check_matrix(CooToCsr::kName, "coo", request.coo, sparse::Values::with_half));
  ACCEL_RETURN_IF_ERROR(sparse::check_format(CooToCsr::kName, "coo", request.coo, sparse::Format::coo));
  return request;
}

void Operation<CooToCsr>::operands(const CooToCsr& request, const Checked&, Operands& operands) {
  sparse::read_matrix(operands, request.coo, "coo");
  sparse::write_dense(operands, request.offsets, "offsets", request.coo.index,
                      static_cast<std::uint64_t>(request.coo.rows + 1));
}

Status Operation<CooToCsr>::run_cpu(const CooToCsr& request, const Checked&, std::span<const BufferView> views,
                                    const CpuTarget&) {
  const sparse::Matrix& m = request.coo;
  ACCEL_RETURN_IF_ERROR(sparse::check_host_structure(CooToCsr::kName, "coo", m, views[rows], views[indices]));
  if (m.index == DType::i64) {
    compress_rows(m.rows, m.nnz, static_cast<const std::int64_t*>(views[rows].data),
                  static_cast<std::int64_t*>(views[offsets].data));
  } else {
    compress_rows(m.rows, m.nnz, static_cast<const std::int32_t*>(views[rows].data),
                  static_cast<std::int32_t*>(views[offsets].data));
  }
  return Status();
}

}  // namespace accel

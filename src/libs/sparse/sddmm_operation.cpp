#include "libs/sparse/sddmm_operation.hpp"

#include <fmt/format.h>

#include "libs/sparse/eigen_sparse.hpp"

namespace accel {

using sparse::SDDMM;

Result<Operation<SDDMM>::Checked> Operation<SDDMM>::validate(const SDDMM& request) {
  constexpr std::string_view name = SDDMM::kName;
  Checked checked{.request = request};
  SDDMM& r = checked.request;
  ACCEL_RETURN_IF_ERROR(sparse::check_transpose(name, "op_a", r.op_a));
  ACCEL_RETURN_IF_ERROR(sparse::check_transpose(name, "op_b", r.op_b));
  ACCEL_RETURN_IF_ERROR(sparse::check_matrix(name, "c", r.c, sparse::Values::single_double));
  ACCEL_RETURN_IF_ERROR(sparse::check_format(name, "c", r.c, sparse::Format::csr));
  const std::int64_t m = r.c.rows, n = r.c.cols;
  // op(A) is m x k: k is what A has beside m.
  const bool ta = r.op_a == Transpose::transpose, tb = r.op_b == Transpose::transpose;
  const std::int64_t k = ta ? r.a.rows : r.a.cols;
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, sparse::check_dense(name, "a", r.a, ta ? k : m, ta ? m : k));
  ACCEL_ASSIGN_OR_RETURN(checked.b_extent, sparse::check_dense(name, "b", r.b, tb ? n : k, tb ? k : n));
  if (r.a.order != r.b.order) {
    return invalid_argument(fmt::format("{}: a is {} and b {}; they must be in the same order", name,
                                        to_string(r.a.order), to_string(r.b.order)));
  }
  return checked;
}

void Operation<SDDMM>::operands(const SDDMM& request, const Checked& checked, Operands& operands) {
  const sparse::Matrix& c = request.c;
  operands.typed(c.offsets, "c.offsets", Access::read, c.index, sparse::offsets_count(c));
  operands.typed(c.indices, "c.indices", Access::read, c.index, static_cast<std::uint64_t>(c.nnz));
  sparse::write_dense(operands, c.values, "c.values", c.dtype, static_cast<std::uint64_t>(c.nnz));
  sparse::read_dense(operands, request.a.data, "a", c.dtype, checked.a_extent);
  sparse::read_dense(operands, request.b.data, "b", c.dtype, checked.b_extent);
}

Status Operation<SDDMM>::run_cpu(const SDDMM& request, const Checked& checked, std::span<const BufferView> views,
                                 const CpuTarget&) {
  ACCEL_RETURN_IF_ERROR(sparse::check_host_structure(SDDMM::kName, "c", request.c, views[offsets], views[indices]));
  return sparse::eigen_sddmm(checked.request, views);
}

void Operation<SDDMM>::describe_cpu(LibraryReport& report) { report.report(sparse::eigen_library()); }

}  // namespace accel

#include "libs/sparse/product_operation.hpp"

#include <fmt/format.h>

#include "libs/sparse/eigen_sparse.hpp"

namespace accel {

using sparse::SpMM;
using sparse::SpMV;

Result<SpMV> Operation<SpMV>::validate(const SpMV& request) {
  constexpr std::string_view name = SpMV::kName;
  ACCEL_RETURN_IF_ERROR(sparse::check_transpose(name, "op", request.op));
  ACCEL_RETURN_IF_ERROR(sparse::check_matrix(name, "a", request.a, sparse::Values::with_half));
  return request;
}

void Operation<SpMV>::operands(const SpMV& request, const Checked&, Operands& operands) {
  sparse::read_matrix(operands, request.a, "a");
  const auto x_count = static_cast<std::uint64_t>(sparse::op_cols(request.a, request.op));
  const auto y_count = static_cast<std::uint64_t>(sparse::op_rows(request.a, request.op));
  sparse::read_dense(operands, request.x, "x", request.a.dtype, x_count);
  sparse::write_dense(operands, request.y, "y", request.a.dtype, y_count);
}

Status Operation<SpMV>::check_cpu_support(const Checked& checked) {
  return sparse::check_cpu_values(SpMV::kName, checked.a);
}

Status Operation<SpMV>::run_cpu(const SpMV& request, const Checked&, std::span<const BufferView> views,
                                const CpuTarget&) {
  ACCEL_RETURN_IF_ERROR(sparse::check_host_structure(SpMV::kName, "a", request.a, views[offsets], views[indices]));
  return sparse::eigen_spmv(request, views);
}

void Operation<SpMV>::describe_cpu(LibraryReport& report) { report.report(sparse::eigen_library()); }

Result<Operation<SpMM>::Checked> Operation<SpMM>::validate(const SpMM& request) {
  constexpr std::string_view name = SpMM::kName;
  Checked checked{.request = request};
  SpMM& r = checked.request;
  ACCEL_RETURN_IF_ERROR(sparse::check_transpose(name, "op_a", r.op_a));
  ACCEL_RETURN_IF_ERROR(sparse::check_transpose(name, "op_b", r.op_b));
  ACCEL_RETURN_IF_ERROR(r.a.format == sparse::Format::blocked_ell
                            ? sparse::check_blocked_ell(name, "a", r.a, sparse::Values::with_half)
                            : sparse::check_matrix(name, "a", r.a, sparse::Values::with_half));
  const std::int64_t m = sparse::op_rows(r.a, r.op_a), k = sparse::op_cols(r.a, r.op_a);
  const std::int64_t n = r.op_b == Transpose::none ? r.b.cols : r.b.rows;
  const std::int64_t b_rows = r.op_b == Transpose::none ? k : n, b_cols = r.op_b == Transpose::none ? n : k;
  ACCEL_ASSIGN_OR_RETURN(checked.b_extent, sparse::check_dense(name, "b", r.b, b_rows, b_cols));
  ACCEL_ASSIGN_OR_RETURN(checked.c_extent, sparse::check_dense(name, "c", r.c, m, n));
  if (r.b.order != r.c.order) {
    return invalid_argument(fmt::format("{}: b is {} and c {}; they must be in the same order", name,
                                        to_string(r.b.order), to_string(r.c.order)));
  }
  return checked;
}

void Operation<SpMM>::operands(const SpMM& request, const Checked& checked, Operands& operands) {
  sparse::read_matrix(operands, request.a, "a");
  sparse::read_dense(operands, request.b.data, "b", request.a.dtype, checked.b_extent);
  sparse::write_dense(operands, request.c.data, "c", request.a.dtype, checked.c_extent);
}

Status Operation<SpMM>::check_cpu_support(const Checked& checked) {
  return sparse::check_cpu_values(SpMM::kName, checked.request.a);
}

Status Operation<SpMM>::run_cpu(const SpMM& request, const Checked& checked, std::span<const BufferView> views,
                                const CpuTarget&) {
  ACCEL_RETURN_IF_ERROR(sparse::check_host_structure(SpMM::kName, "a", request.a, views[offsets], views[indices]));
  return sparse::eigen_spmm(checked.request, views);
}

void Operation<SpMM>::describe_cpu(LibraryReport& report) { report.report(sparse::eigen_library()); }

}  // namespace accel

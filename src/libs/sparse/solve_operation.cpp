#include "libs/sparse/solve_operation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "libs/sparse/eigen_sparse.hpp"

namespace accel {

using sparse::SpSV;

namespace {

// Eigen divides by the last entry it reads before the diagonal's place: a row without its diagonal is refused.
template <class I>
Status check_diagonal(const sparse::Matrix& m, const I* offsets, const I* indices) {
  for (std::int64_t i = 0; i < m.rows; ++i) {
    const I* first = indices + offsets[i];
    const I* last = indices + offsets[i + 1];
    if (std::find(first, last, static_cast<I>(i)) == last) {
      return Status(
          Code::failed_precondition,
          fmt::format("{}: a stores no diagonal entry in row {}, and its diagonal is not unit", SpSV::kName, i));
    }
  }
  return Status();
}

}  // namespace

Result<SpSV> Operation<SpSV>::validate(const SpSV& request) {
  constexpr std::string_view name = SpSV::kName;
  if (request.op != Transpose::none && request.op != Transpose::transpose) {
    return invalid_argument(
        fmt::format("{}: op = {} is neither none nor transpose", name, static_cast<int>(request.op)));
  }
  if (request.fill != sparse::Fill::lower && request.fill != sparse::Fill::upper) {
    return invalid_argument(
        fmt::format("{}: fill = {} is neither lower nor upper", name, static_cast<int>(request.fill)));
  }
  if (request.diagonal != sparse::Diagonal::non_unit && request.diagonal != sparse::Diagonal::unit) {
    return invalid_argument(
        fmt::format("{}: diagonal = {} is neither non_unit nor unit", name, static_cast<int>(request.diagonal)));
  }
  ACCEL_RETURN_IF_ERROR(sparse::check_matrix(name, "a", request.a, sparse::Values::single_double));
  ACCEL_RETURN_IF_ERROR(sparse::check_format(name, "a", request.a, sparse::Format::csr));
  ACCEL_RETURN_IF_ERROR(sparse::check_square(name, "a", request.a));
  return request;
}

void Operation<SpSV>::operands(const SpSV& request, const Checked&, Operands& operands) {
  sparse::read_matrix(operands, request.a, "a");
  const auto n = static_cast<std::uint64_t>(request.a.rows);
  sparse::read_dense(operands, request.x, "x", request.a.dtype, n);
  sparse::write_dense(operands, request.y, "y", request.a.dtype, n);
}

Status Operation<SpSV>::run_cpu(const SpSV& request, const Checked&, std::span<const BufferView> views,
                                const CpuTarget&) {
  ACCEL_RETURN_IF_ERROR(sparse::check_host_structure(SpSV::kName, "a", request.a, views[offsets], views[indices]));
  if (request.diagonal == sparse::Diagonal::non_unit) {
    ACCEL_RETURN_IF_ERROR(request.a.index == DType::i64
                              ? check_diagonal(request.a, static_cast<const std::int64_t*>(views[offsets].data),
                                               static_cast<const std::int64_t*>(views[indices].data))
                              : check_diagonal(request.a, static_cast<const std::int32_t*>(views[offsets].data),
                                               static_cast<const std::int32_t*>(views[indices].data)));
  }
  return sparse::eigen_spsv(request, views);
}

void Operation<SpSV>::describe_cpu(LibraryReport& report) { report.report(sparse::eigen_library()); }

}  // namespace accel

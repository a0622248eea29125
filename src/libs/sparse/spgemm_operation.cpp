#include "libs/sparse/spgemm_operation.hpp"

#include <fmt/format.h>

#include "libs/sparse/eigen_sparse.hpp"

namespace accel {

using sparse::SpGemm;
using sparse::SpGemmCount;

namespace {

// A and B: both CSR, of the same types, their shapes compatible.
Status check_factors(std::string_view name, const sparse::Matrix& a, const sparse::Matrix& b) {
  ACCEL_RETURN_IF_ERROR(sparse::check_matrix(name, "a", a, sparse::Values::single_double));
  ACCEL_RETURN_IF_ERROR(sparse::check_matrix(name, "b", b, sparse::Values::single_double));
  ACCEL_RETURN_IF_ERROR(sparse::check_format(name, "a", a, sparse::Format::csr));
  ACCEL_RETURN_IF_ERROR(sparse::check_format(name, "b", b, sparse::Format::csr));
  ACCEL_RETURN_IF_ERROR(sparse::check_same_types(name, "b", b, a));
  if (a.cols != b.rows) {
    return invalid_argument(fmt::format("{}: a is {} x {} and b {} x {}; a's columns must be b's rows", name, a.rows,
                                        a.cols, b.rows, b.cols));
  }
  return Status();
}

void read_factors(Operands& operands, const sparse::Matrix& a, const sparse::Matrix& b) {
  sparse::read_matrix(operands, a, "a");
  sparse::read_matrix(operands, b, "b");
}

}  // namespace

Result<SpGemmCount> Operation<SpGemmCount>::validate(const SpGemmCount& request) {
  ACCEL_RETURN_IF_ERROR(check_factors(SpGemmCount::kName, request.a, request.b));
  return request;
}

void Operation<SpGemmCount>::operands(const SpGemmCount& request, const Checked&, Operands& operands) {
  read_factors(operands, request.a, request.b);
  sparse::write_dense(operands, request.c_offsets, "c_offsets", request.a.index,
                      static_cast<std::uint64_t>(request.a.rows + 1));
}

Status Operation<SpGemmCount>::run_cpu(const SpGemmCount& request, const Checked&, std::span<const BufferView> views,
                                       const CpuTarget&) {
  constexpr std::string_view name = SpGemmCount::kName;
  ACCEL_RETURN_IF_ERROR(sparse::check_host_structure(name, "a", request.a, views[a_offsets], views[a_indices]));
  ACCEL_RETURN_IF_ERROR(sparse::check_host_structure(name, "b", request.b, views[b_offsets], views[b_indices]));
  return sparse::eigen_spgemm_count(request, views);
}

void Operation<SpGemmCount>::describe_cpu(LibraryReport& report) { report.report(sparse::eigen_library()); }

Result<SpGemm> Operation<SpGemm>::validate(const SpGemm& request) {
  constexpr std::string_view name = SpGemm::kName;
  ACCEL_RETURN_IF_ERROR(check_factors(name, request.a, request.b));
  const sparse::Matrix& c = request.c;
  ACCEL_RETURN_IF_ERROR(sparse::check_matrix(name, "c", c, sparse::Values::single_double));
  ACCEL_RETURN_IF_ERROR(sparse::check_format(name, "c", c, sparse::Format::csr));
  ACCEL_RETURN_IF_ERROR(sparse::check_same_types(name, "c", c, request.a));
  if (c.rows != request.a.rows || c.cols != request.b.cols) {
    return invalid_argument(
        fmt::format("{}: c is {} x {}; A·B is {} x {}", name, c.rows, c.cols, request.a.rows, request.b.cols));
  }
  return request;
}

void Operation<SpGemm>::operands(const SpGemm& request, const Checked&, Operands& operands) {
  read_factors(operands, request.a, request.b);
  sparse::write_matrix(operands, request.c, "c");
}

Status Operation<SpGemm>::run_cpu(const SpGemm& request, const Checked&, std::span<const BufferView> views,
                                  const CpuTarget&) {
  constexpr std::string_view name = SpGemm::kName;
  ACCEL_RETURN_IF_ERROR(sparse::check_host_structure(name, "a", request.a, views[a_offsets], views[a_indices]));
  ACCEL_RETURN_IF_ERROR(sparse::check_host_structure(name, "b", request.b, views[b_offsets], views[b_indices]));
  return sparse::eigen_spgemm(request, views);
}

void Operation<SpGemm>::describe_cpu(LibraryReport& report) { report.report(sparse::eigen_library()); }

}  // namespace accel

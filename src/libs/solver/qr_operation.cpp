#include "libs/solver/qr_operation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "libs/solver/lapacke_dense.hpp"

namespace accel {

using solver::Geqrf;
using solver::Orgqr;

Result<Operation<Geqrf>::Checked> Operation<Geqrf>::validate(const Geqrf& request) {
  constexpr std::string_view name = Geqrf::kName;
  Checked checked{.request = request};
  Geqrf& r = checked.request;
  ACCEL_RETURN_IF_ERROR(solver::check_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(solver::check_batch(name, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, solver::check_matrices(name, "a", r.m, r.n, r.batch, r.lda, r.stride_a,
                                                                  /*written=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.b_extent, solver::vector_extent(name, "tau", std::min(r.m, r.n), r.batch));
  return checked;
}

void Operation<Geqrf>::operands(const Geqrf& request, const Checked& checked, Operands& operands) {
  solver::write_matrix(operands, request.a, "a", checked.request.dtype, checked.a_extent);
  solver::write_matrix(operands, request.tau, "tau", checked.request.dtype, checked.b_extent);
}

Status Operation<Geqrf>::run_cpu(const Geqrf&, const Checked& checked, std::span<const BufferView> views,
                                 const CpuTarget&) {
  return solver::lapacke_geqrf(checked.request, views[a].data, views[tau].data);
}

void Operation<Geqrf>::describe_cpu(LibraryReport& report) { report.report(solver::lapack_library()); }

Result<Operation<Orgqr>::Checked> Operation<Orgqr>::validate(const Orgqr& request) {
  constexpr std::string_view name = Orgqr::kName;
  Checked checked{.request = request};
  Orgqr& r = checked.request;
  ACCEL_RETURN_IF_ERROR(solver::check_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "k", r.k));
  if (r.n > r.m || r.k > r.n) {
    return invalid_argument(fmt::format("{}: needs m >= n >= k, not m = {}, n = {}, k = {}", name, r.m, r.n, r.k));
  }
  ACCEL_RETURN_IF_ERROR(solver::check_batch(name, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, solver::check_matrices(name, "a", r.m, r.n, r.batch, r.lda, r.stride_a,
                                                                  /*written=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.b_extent, solver::vector_extent(name, "tau", r.k, r.batch));
  return checked;
}

void Operation<Orgqr>::operands(const Orgqr& request, const Checked& checked, Operands& operands) {
  solver::write_matrix(operands, request.a, "a", checked.request.dtype, checked.a_extent);
  solver::read_matrix(operands, request.tau, "tau", checked.request.dtype, checked.b_extent);
}

Status Operation<Orgqr>::run_cpu(const Orgqr&, const Checked& checked, std::span<const BufferView> views,
                                 const CpuTarget&) {
  return solver::lapacke_orgqr(checked.request, views[a].data, views[tau].data);
}

void Operation<Orgqr>::describe_cpu(LibraryReport& report) { report.report(solver::lapack_library()); }

}  // namespace accel

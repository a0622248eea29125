#include "libs/solver/qr_operation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "libs/solver/lapacke_dense.hpp"

namespace accel {

using solver::Geqrf;
using solver::Orgqr;
using solver::Ormqr;

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

Result<Operation<Ormqr>::Checked> Operation<Ormqr>::validate(const Ormqr& request) {
  constexpr std::string_view name = Ormqr::kName;
  Checked checked{.request = request};
  Ormqr& r = checked.request;
  ACCEL_RETURN_IF_ERROR(solver::check_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(solver::check_side(name, r.side));
  ACCEL_RETURN_IF_ERROR(solver::check_transpose(name, r.transpose));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "k", r.k));
  const bool left = r.side == solver::Side::left;
  const std::int64_t order = left ? r.m : r.n;  // Q's
  if (r.k > order) {
    return invalid_argument(fmt::format("{}: needs k <= {} (Q is {} x {} on the {}), not k = {}", name,
                                        left ? "m" : "n", order, order, solver::to_string(r.side), r.k));
  }
  ACCEL_RETURN_IF_ERROR(solver::check_batch(name, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, solver::check_matrices(name, "a", order, r.k, r.batch, r.lda, r.stride_a,
                                                                  /*written=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.tau_extent, solver::vector_extent(name, "tau", r.k, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.c_extent, solver::check_matrices(name, "c", r.m, r.n, r.batch, r.ldc, r.stride_c,
                                                                  /*written=*/true));
  return checked;
}

void Operation<Ormqr>::operands(const Ormqr& request, const Checked& checked, Operands& operands) {
  solver::write_matrix(operands, request.a, "a", checked.request.dtype, checked.a_extent);
  solver::read_matrix(operands, request.tau, "tau", checked.request.dtype, checked.tau_extent);
  solver::write_matrix(operands, request.c, "c", checked.request.dtype, checked.c_extent);
}

Status Operation<Ormqr>::run_cpu(const Ormqr&, const Checked& checked, std::span<const BufferView> views,
                                 const CpuTarget&) {
  return solver::lapacke_ormqr(checked.request, views[a].data, views[tau].data, views[c].data);
}

void Operation<Ormqr>::describe_cpu(LibraryReport& report) { report.report(solver::lapack_library()); }

}  // namespace accel

#include "libs/solver/cholesky_operation.hpp"

#include "libs/solver/lapacke_dense.hpp"

namespace accel {

using solver::Potrf;
using solver::Potrs;

Result<Operation<Potrf>::Checked> Operation<Potrf>::validate(const Potrf& request) {
  constexpr std::string_view name = Potrf::kName;
  Checked checked{.request = request};
  Potrf& r = checked.request;
  ACCEL_RETURN_IF_ERROR(solver::check_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(solver::check_fill(name, r.fill));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(solver::check_batch(name, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, solver::check_matrices(name, "a", r.n, r.n, r.batch, r.lda, r.stride_a,
                                                                  /*written=*/true));
  return checked;
}

void Operation<Potrf>::operands(const Potrf& request, const Checked& checked, Operands& operands) {
  const Potrf& r = checked.request;
  solver::write_matrix(operands, request.a, "a", r.dtype, checked.a_extent);
  solver::write_optional(operands, request.info, "info", DType::i32, static_cast<std::uint64_t>(r.batch));
}

Status Operation<Potrf>::run_cpu(const Potrf&, const Checked& checked, std::span<const BufferView> views,
                                 const CpuTarget&) {
  return solver::lapacke_potrf(checked.request, views[a].data, static_cast<std::int32_t*>(views[info].data));
}

void Operation<Potrf>::describe_cpu(LibraryReport& report) { report.report(solver::lapack_library()); }

Result<Operation<Potrs>::Checked> Operation<Potrs>::validate(const Potrs& request) {
  constexpr std::string_view name = Potrs::kName;
  Checked checked{.request = request};
  Potrs& r = checked.request;
  ACCEL_RETURN_IF_ERROR(solver::check_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(solver::check_fill(name, r.fill));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "nrhs", r.nrhs));
  ACCEL_RETURN_IF_ERROR(solver::check_batch(name, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, solver::check_matrices(name, "a", r.n, r.n, r.batch, r.lda, r.stride_a,
                                                                  /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(checked.b_extent, solver::check_matrices(name, "b", r.n, r.nrhs, r.batch, r.ldb, r.stride_b,
                                                                  /*written=*/true));
  return checked;
}

void Operation<Potrs>::operands(const Potrs& request, const Checked& checked, Operands& operands) {
  const Potrs& r = checked.request;
  solver::read_matrix(operands, request.a, "a", r.dtype, checked.a_extent);
  solver::write_matrix(operands, request.b, "b", r.dtype, checked.b_extent);
}

Status Operation<Potrs>::run_cpu(const Potrs&, const Checked& checked, std::span<const BufferView> views,
                                 const CpuTarget&) {
  return solver::lapacke_potrs(checked.request, views[a].data, views[b].data);
}

void Operation<Potrs>::describe_cpu(LibraryReport& report) { report.report(solver::lapack_library()); }

}  // namespace accel

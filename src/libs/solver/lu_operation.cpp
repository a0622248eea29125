#include "libs/solver/lu_operation.hpp"

#include "libs/solver/lapacke_dense.hpp"

namespace accel {

using solver::Getrf;
using solver::Getrs;

Result<Operation<Getrf>::Checked> Operation<Getrf>::validate(const Getrf& request) {
  constexpr std::string_view name = Getrf::kName;
  Checked checked{.request = request};
  Getrf& r = checked.request;
  ACCEL_RETURN_IF_ERROR(solver::check_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(solver::check_batch(name, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, solver::check_matrices(name, "a", r.n, r.n, r.batch, r.lda, r.stride_a,
                                                                  /*written=*/true));
  ACCEL_RETURN_IF_ERROR(solver::vector_extent(name, "ipiv", r.n, r.batch).status());
  return checked;
}

void Operation<Getrf>::operands(const Getrf& request, const Checked& checked, Operands& operands) {
  const Getrf& r = checked.request;
  solver::write_matrix(operands, request.a, "a", r.dtype, checked.a_extent);
  solver::write_matrix(operands, request.ipiv, "ipiv", DType::i32, static_cast<std::uint64_t>(r.n * r.batch));
  solver::write_optional(operands, request.info, "info", DType::i32, static_cast<std::uint64_t>(r.batch));
}

Status Operation<Getrf>::run_cpu(const Getrf&, const Checked& checked, std::span<const BufferView> views,
                                 const CpuTarget&) {
  return solver::lapacke_getrf(checked.request, views[a].data, static_cast<std::int32_t*>(views[ipiv].data),
                               static_cast<std::int32_t*>(views[info].data));
}

void Operation<Getrf>::describe_cpu(LibraryReport& report) { report.report(solver::lapack_library()); }

Result<Operation<Getrs>::Checked> Operation<Getrs>::validate(const Getrs& request) {
  constexpr std::string_view name = Getrs::kName;
  Checked checked{.request = request};
  Getrs& r = checked.request;
  ACCEL_RETURN_IF_ERROR(solver::check_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(solver::check_transpose(name, r.transpose));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "nrhs", r.nrhs));
  ACCEL_RETURN_IF_ERROR(solver::check_batch(name, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, solver::check_matrices(name, "a", r.n, r.n, r.batch, r.lda, r.stride_a,
                                                                  /*written=*/false));
  ACCEL_ASSIGN_OR_RETURN(checked.b_extent, solver::check_matrices(name, "b", r.n, r.nrhs, r.batch, r.ldb, r.stride_b,
                                                                  /*written=*/true));
  ACCEL_RETURN_IF_ERROR(solver::vector_extent(name, "ipiv", r.n, r.batch).status());
  return checked;
}

void Operation<Getrs>::operands(const Getrs& request, const Checked& checked, Operands& operands) {
  const Getrs& r = checked.request;
  solver::read_matrix(operands, request.a, "a", r.dtype, checked.a_extent);
  solver::read_matrix(operands, request.ipiv, "ipiv", DType::i32, static_cast<std::uint64_t>(r.n * r.batch));
  solver::write_matrix(operands, request.b, "b", r.dtype, checked.b_extent);
}

Status Operation<Getrs>::run_cpu(const Getrs&, const Checked& checked, std::span<const BufferView> views,
                                 const CpuTarget&) {
  return solver::lapacke_getrs(checked.request, views[a].data, static_cast<const std::int32_t*>(views[ipiv].data),
                               views[b].data);
}

void Operation<Getrs>::describe_cpu(LibraryReport& report) { report.report(solver::lapack_library()); }

}  // namespace accel

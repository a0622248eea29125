#include "libs/solver/svd_operation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "libs/solver/lapacke_dense.hpp"
#include "operation/complex_dtypes.hpp"

namespace accel {

using solver::Gesvd;
using solver::SvdJob;

namespace {

Status check_job(std::string_view name, std::string_view field, SvdJob job, const BufferHandle& buffer) {
  if (job != SvdJob::none && job != SvdJob::thin && job != SvdJob::full) {
    return invalid_argument(
        fmt::format("{}: {} = {} is neither none, thin nor full", name, field, static_cast<int>(job)));
  }
  if (job == SvdJob::none && !buffer.is_null()) {
    return invalid_argument(fmt::format("{}: a buffer was given for {} but its job is none", name, field.substr(4)));
  }
  return Status();
}

}  // namespace

Result<solver::CheckedGesvd> Operation<Gesvd>::validate(const Gesvd& request) {
  constexpr std::string_view name = Gesvd::kName;
  Checked checked{.request = request};
  Gesvd& r = checked.request;
  ACCEL_RETURN_IF_ERROR(solver::check_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(check_job(name, "job_u", r.job_u, r.u));
  ACCEL_RETURN_IF_ERROR(check_job(name, "job_vt", r.job_vt, r.vt));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(solver::check_batch(name, r.batch));
  const std::int64_t k = std::min(r.m, r.n);
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, solver::check_matrices(name, "a", r.m, r.n, r.batch, r.lda, r.stride_a,
                                                                  /*written=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.s_extent, solver::vector_extent(name, "s", k, r.batch));
  // LAPACK wants leading dimensions of at least 1 even for vectors it does not compute.
  checked.u_cols = r.job_u == SvdJob::full ? r.m : r.job_u == SvdJob::thin ? k : 0;
  checked.vt_rows = r.job_vt == SvdJob::full ? r.n : r.job_vt == SvdJob::thin ? k : 0;
  ACCEL_ASSIGN_OR_RETURN(
      checked.u_extent, solver::check_matrices(name, "u", checked.u_cols == 0 ? 0 : r.m, checked.u_cols, r.batch, r.ldu,
                                               r.stride_u, /*written=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.vt_extent, solver::check_matrices(name, "vt", checked.vt_rows, r.n, r.batch, r.ldvt,
                                                                   r.stride_vt, /*written=*/true));
  return checked;
}

void Operation<Gesvd>::operands(const Gesvd& request, const Checked& checked, Operands& operands) {
  const Gesvd& r = checked.request;
  solver::write_matrix(operands, request.a, "a", r.dtype, checked.a_extent);
  solver::write_matrix(operands, request.s, "s", real_dtype(r.dtype), checked.s_extent);
  if (r.job_u == SvdJob::none) {
    operands.absent("u");
  } else {
    solver::write_matrix(operands, request.u, "u", r.dtype, checked.u_extent);
  }
  if (r.job_vt == SvdJob::none) {
    operands.absent("vt");
  } else {
    solver::write_matrix(operands, request.vt, "vt", r.dtype, checked.vt_extent);
  }
  solver::write_optional(operands, request.info, "info", DType::i32, static_cast<std::uint64_t>(r.batch));
}

Status Operation<Gesvd>::run_cpu(const Gesvd&, const Checked& checked, std::span<const BufferView> views,
                                 const CpuTarget&) {
  return solver::lapacke_gesvd(checked.request, views[a].data, views[s].data, views[u].data, views[vt].data,
                               static_cast<std::int32_t*>(views[info].data));
}

void Operation<Gesvd>::describe_cpu(LibraryReport& report) { report.report(solver::lapack_library()); }

}  // namespace accel

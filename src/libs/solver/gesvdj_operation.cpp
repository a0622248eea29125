#include "libs/solver/gesvdj_operation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "libs/solver/lapacke_dense.hpp"
#include "operation/complex_dtypes.hpp"

namespace accel {

using solver::Gesvdj;
using solver::SvdJob;

namespace {

Status check_vectors(std::string_view name, const Gesvdj& r) {
  if (r.job != SvdJob::none && r.job != SvdJob::thin && r.job != SvdJob::full) {
    return invalid_argument(fmt::format("{}: job = {} is neither none, thin nor full", name, static_cast<int>(r.job)));
  }
  if (r.job == SvdJob::none && (!r.u.is_null() || !r.v.is_null())) {
    return invalid_argument(
        fmt::format("{}: a buffer was given for {} but the job is none", name, r.u.is_null() ? "v" : "u"));
  }
  return Status();
}

Status check_stopping(std::string_view name, const Gesvdj& r) {
  if (!std::isfinite(r.tolerance) || r.tolerance < 0) {
    return invalid_argument(fmt::format("{}: tolerance = {} is not a finite number >= 0", name, r.tolerance));
  }
  if (r.max_sweeps < 1) {
    return invalid_argument(fmt::format("{}: max_sweeps = {} must be at least 1", name, r.max_sweeps));
  }
  return Status();
}

}  // namespace

Result<solver::CheckedGesvdj> Operation<Gesvdj>::validate(const Gesvdj& request) {
  constexpr std::string_view name = Gesvdj::kName;
  Checked checked{.request = request};
  Gesvdj& r = checked.request;
  ACCEL_RETURN_IF_ERROR(solver::check_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(check_vectors(name, r));
  ACCEL_RETURN_IF_ERROR(check_stopping(name, r));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(solver::check_batch(name, r.batch));
  const std::int64_t k = std::min(r.m, r.n);
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, solver::check_matrices(name, "a", r.m, r.n, r.batch, r.lda, r.stride_a,
                                                                  /*written=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.s_extent, solver::vector_extent(name, "s", k, r.batch));
  checked.u_cols = r.job == SvdJob::full ? r.m : r.job == SvdJob::thin ? k : 0;
  checked.v_cols = r.job == SvdJob::full ? r.n : r.job == SvdJob::thin ? k : 0;
  // Leading dimensions of vectors not computed still resolve to at least 1, as LAPACK and cuSOLVER want them.
  ACCEL_ASSIGN_OR_RETURN(checked.u_extent, solver::check_matrices(name, "u", checked.u_cols == 0 ? 0 : r.m,
                                                                  checked.u_cols, r.batch, r.ldu, r.stride_u,
                                                                  /*written=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.v_extent, solver::check_matrices(name, "v", checked.v_cols == 0 ? 0 : r.n,
                                                                  checked.v_cols, r.batch, r.ldv, r.stride_v,
                                                                  /*written=*/true));
  return checked;
}

void Operation<Gesvdj>::operands(const Gesvdj& request, const Checked& checked, Operands& operands) {
  const Gesvdj& r = checked.request;
  solver::write_matrix(operands, request.a, "a", r.dtype, checked.a_extent);
  solver::write_matrix(operands, request.s, "s", real_dtype(r.dtype), checked.s_extent);
  if (r.job == SvdJob::none) {
    operands.absent("u").absent("v");
  } else {
    solver::write_matrix(operands, request.u, "u", r.dtype, checked.u_extent);
    solver::write_matrix(operands, request.v, "v", r.dtype, checked.v_extent);
  }
  solver::write_optional(operands, request.info, "info", DType::i32, static_cast<std::uint64_t>(r.batch));
}

Status Operation<Gesvdj>::run_cpu(const Gesvdj&, const Checked& checked, std::span<const BufferView> views,
                                  const CpuTarget&) {
  return solver::lapacke_gesvdj(checked.request, views[a].data, views[s].data, views[u].data, views[v].data,
                                static_cast<std::int32_t*>(views[info].data));
}

void Operation<Gesvdj>::describe_cpu(LibraryReport& report) { report.report(solver::lapack_library()); }

}  // namespace accel

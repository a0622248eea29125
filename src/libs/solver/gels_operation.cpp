#include "libs/solver/gels_operation.hpp"

#include <fmt/format.h>

#include "libs/solver/lapacke_dense.hpp"

namespace accel {

using solver::Gels;

Result<Operation<Gels>::Checked> Operation<Gels>::validate(const Gels& request) {
  constexpr std::string_view name = Gels::kName;
  Checked checked{.request = request};
  Gels& r = checked.request;
  ACCEL_RETURN_IF_ERROR(solver::check_dtype(name, r.dtype));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "m", r.m));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "nrhs", r.nrhs));
  if (r.m < r.n) {
    return not_supported(fmt::format(
        "{}: m = {} < n = {}: the minimum-norm solution of an underdetermined system is not supported (it needs an LQ "
        "factorisation, which cuSOLVER lacks); only m >= n is",
        name, r.m, r.n));
  }
  ACCEL_RETURN_IF_ERROR(solver::check_batch(name, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, solver::check_matrices(name, "a", r.m, r.n, r.batch, r.lda, r.stride_a,
                                                                  /*written=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.b_extent, solver::check_matrices(name, "b", r.m, r.nrhs, r.batch, r.ldb, r.stride_b,
                                                                  /*written=*/true));
  return checked;
}

void Operation<Gels>::operands(const Gels& request, const Checked& checked, Operands& operands) {
  const Gels& r = checked.request;
  solver::write_matrix(operands, request.a, "a", r.dtype, checked.a_extent);
  solver::write_matrix(operands, request.b, "b", r.dtype, checked.b_extent);
  solver::write_optional(operands, request.info, "info", DType::i32, static_cast<std::uint64_t>(r.batch));
}

Status Operation<Gels>::run_cpu(const Gels&, const Checked& checked, std::span<const BufferView> views,
                                const CpuTarget&) {
  return solver::lapacke_gels(checked.request, views[a].data, views[b].data,
                              static_cast<std::int32_t*>(views[info].data));
}

void Operation<Gels>::describe_cpu(LibraryReport& report) { report.report(solver::lapack_library()); }

}  // namespace accel

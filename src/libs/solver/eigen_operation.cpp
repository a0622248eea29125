#include "libs/solver/eigen_operation.hpp"

#include <fmt/format.h>

#include "libs/solver/lapacke_dense.hpp"
#include "operation/complex_dtypes.hpp"

namespace accel {

using solver::Syevd;

Result<Operation<Syevd>::Checked> Operation<Syevd>::validate(const Syevd& request) {
  constexpr std::string_view name = Syevd::kName;
  Checked checked{.request = request};
  Syevd& r = checked.request;
  ACCEL_RETURN_IF_ERROR(solver::check_dtype(name, r.dtype));
  if (r.job != solver::EigenJob::values && r.job != solver::EigenJob::values_and_vectors) {
    return invalid_argument(
        fmt::format("{}: job = {} is neither values nor values_and_vectors", name, static_cast<int>(r.job)));
  }
  ACCEL_RETURN_IF_ERROR(solver::check_fill(name, r.fill));
  ACCEL_RETURN_IF_ERROR(solver::check_size(name, "n", r.n));
  ACCEL_RETURN_IF_ERROR(solver::check_batch(name, r.batch));
  ACCEL_ASSIGN_OR_RETURN(checked.a_extent, solver::check_matrices(name, "a", r.n, r.n, r.batch, r.lda, r.stride_a,
                                                                  /*written=*/true));
  ACCEL_ASSIGN_OR_RETURN(checked.b_extent, solver::vector_extent(name, "w", r.n, r.batch));
  return checked;
}

void Operation<Syevd>::operands(const Syevd& request, const Checked& checked, Operands& operands) {
  const Syevd& r = checked.request;
  solver::write_matrix(operands, request.a, "a", r.dtype, checked.a_extent);
  solver::write_matrix(operands, request.w, "w", real_dtype(r.dtype), checked.b_extent);
  solver::write_optional(operands, request.info, "info", DType::i32, static_cast<std::uint64_t>(r.batch));
}

Status Operation<Syevd>::run_cpu(const Syevd&, const Checked& checked, std::span<const BufferView> views,
                                 const CpuTarget&) {
  return solver::lapacke_syevd(checked.request, views[a].data, views[w].data,
                               static_cast<std::int32_t*>(views[info].data));
}

void Operation<Syevd>::describe_cpu(LibraryReport& report) { report.report(solver::lapack_library()); }

}  // namespace accel

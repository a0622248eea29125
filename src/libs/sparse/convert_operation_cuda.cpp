#include "libs/sparse/convert_operation_cuda.hpp"

#include <fmt/format.h>

#include "libs/sparse/cusparse_run.hpp"

namespace accel {

using sparse::Analysis;
using sparse::CooToCsr;
using sparse::CsrToCoo;
using sparse::ToDense;

namespace {

Status check_i32(std::string_view request, const sparse::Matrix& m) {
  if (m.index == DType::i32) return Status();
  return not_supported(
      fmt::format("{}: cuSPARSE converts i32 indices only; this matrix's are {}", request, to_string(m.index)));
}

}  // namespace

Status CudaOperation<ToDense>::run(const ToDense&, const Checked& checked, const Plan& plan,
                                   std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<ToDense>;
  const ToDense& r = checked.request;
  if (r.a.rows == 0 || r.a.cols == 0) return Status();
  sparse::DenseMatrixDescriptor out(r.out, views[Op::out].data, r.a.dtype);
  ACCEL_RETURN_IF_ERROR(out.status());
  const cusparseHandle_t handle = plan.state->handle();
  const sparse::AnalysisKey key =
      sparse::analysis_key(sparse::Kind::to_dense, r.a, static_cast<std::int64_t>(r.out.order), r.out.ld, 0, 0, 0);
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const Analysis> analysis,
                         sparse::analysis_of(
                             r.kName, r.a, key, plan, views, run,
                             [&](Analysis& a) -> Status {
                               std::size_t bytes = 0;
                               ACCEL_RETURN_IF_ERROR(sparse::cusparse_status(
                                   cusparseSparseToDense_bufferSize(handle, a.matrix, out.get(),
                                                                    CUSPARSE_SPARSETODENSE_ALG_DEFAULT, &bytes),
                                   "cusparseSparseToDense_bufferSize"));
                               return sparse::allocate_buffer(run, a, bytes);
                             },
                             [](const Analysis&) { return Status(); }));
  return sparse::launched(
      run,
      cusparseSparseToDense(handle, analysis->matrix, out.get(), CUSPARSE_SPARSETODENSE_ALG_DEFAULT, analysis->buffer),
      "cusparseSparseToDense");
}

Result<CudaOperation<CsrToCoo>::Plan> CudaOperation<CsrToCoo>::plan(const CsrToCoo& request, const Checked&,
                                                                    CudaTarget& target) {
  ACCEL_RETURN_IF_ERROR(check_i32(CsrToCoo::kName, request.csr));
  return sparse::plan_sparse(target);
}

Status CudaOperation<CsrToCoo>::run(const CsrToCoo& r, const Checked&, const Plan& plan,
                                    std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<CsrToCoo>;
  ACCEL_RETURN_IF_ERROR(
      sparse::check_structure_on_device(run, r.kName, "csr", r.csr, views[Op::offsets], views[Op::indices]));
  if (r.csr.nnz == 0 || r.csr.rows == 0) return Status();
  return sparse::launched(run,
                          cusparseXcsr2coo(plan.state->handle(), static_cast<const int*>(views[Op::offsets].data),
                                           static_cast<int>(r.csr.nnz), static_cast<int>(r.csr.rows),
                                           static_cast<int*>(views[Op::rows].data), CUSPARSE_INDEX_BASE_ZERO),
                          "cusparseXcsr2coo");
}

Result<CudaOperation<CooToCsr>::Plan> CudaOperation<CooToCsr>::plan(const CooToCsr& request, const Checked&,
                                                                    CudaTarget& target) {
  ACCEL_RETURN_IF_ERROR(check_i32(CooToCsr::kName, request.coo));
  return sparse::plan_sparse(target);
}

Status CudaOperation<CooToCsr>::run(const CooToCsr& r, const Checked&, const Plan& plan,
                                    std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<CooToCsr>;
  ACCEL_RETURN_IF_ERROR(
      sparse::check_structure_on_device(run, r.kName, "coo", r.coo, views[Op::rows], views[Op::indices]));
  const std::uint64_t bytes = static_cast<std::uint64_t>(r.coo.rows + 1) * sizeof(std::int32_t);
  if (r.coo.nnz == 0) {
    return run.target.check(cudaMemsetAsync(views[Op::offsets].data, 0, bytes, run.target.stream()),
                            "zeroing the offsets of an empty matrix");
  }
  return sparse::launched(run,
                          cusparseXcoo2csr(plan.state->handle(), static_cast<const int*>(views[Op::rows].data),
                                           static_cast<int>(r.coo.nnz), static_cast<int>(r.coo.rows),
                                           static_cast<int*>(views[Op::offsets].data), CUSPARSE_INDEX_BASE_ZERO),
                          "cusparseXcoo2csr");
}

}  // namespace accel

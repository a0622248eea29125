#include "libs/sparse/convert_operation_cuda.hpp"

#include "libs/sparse/convert_kernel.hpp"
#include "libs/sparse/cusparse_run.hpp"

namespace accel {

using sparse::Analysis;
using sparse::CooToCsr;
using sparse::CsrToCoo;
using sparse::ToDense;

Status CudaOperation<ToDense>::run(const ToDense&, const Checked& checked, const Plan& plan,
                                   std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<ToDense>;
  const ToDense& r = checked.request;
  if (r.a.rows == 0 || r.a.cols == 0) return Status();
  sparse::DenseMatrixDescriptor out(*plan.api, r.out, views[Op::out].data, r.a.dtype);
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
                                   plan.api->cusparseSparseToDense_bufferSize(
                                       handle, a.matrix, out.get(), CUSPARSE_SPARSETODENSE_ALG_DEFAULT, &bytes),
                                   "cusparseSparseToDense_bufferSize"));
                               return sparse::allocate_buffer(run, a, bytes);
                             },
                             [](const Analysis&) { return Status(); }));
  return sparse::launched(run,
                          plan.api->cusparseSparseToDense(handle, analysis->matrix, out.get(),
                                                          CUSPARSE_SPARSETODENSE_ALG_DEFAULT, analysis->buffer),
                          "cusparseSparseToDense");
}

Status CudaOperation<CsrToCoo>::run(const CsrToCoo& r, const Checked&, const Plan& plan,
                                    std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<CsrToCoo>;
  ACCEL_RETURN_IF_ERROR(
      sparse::check_structure_once(run, *plan.verdicts, r.kName, "csr", r.csr, views[Op::offsets], views[Op::indices])
          .status());
  return run.target.check(sparse::launch_csr_to_coo(r.csr.index == DType::i64, r.csr.rows, r.csr.nnz,
                                                    views[Op::offsets].data, views[Op::rows].data, run.target.stream()),
                          "expanding the row offsets");
}

Status CudaOperation<CooToCsr>::run(const CooToCsr& r, const Checked&, const Plan& plan,
                                    std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<CooToCsr>;
  ACCEL_RETURN_IF_ERROR(
      sparse::check_structure_once(run, *plan.verdicts, r.kName, "coo", r.coo, views[Op::rows], views[Op::indices])
          .status());
  return run.target.check(sparse::launch_coo_to_csr(r.coo.index == DType::i64, r.coo.rows, r.coo.nnz,
                                                    views[Op::rows].data, views[Op::offsets].data, run.target.stream()),
                          "compressing the rows");
}

}  // namespace accel

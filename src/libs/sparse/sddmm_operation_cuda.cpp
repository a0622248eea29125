#include "libs/sparse/sddmm_operation_cuda.hpp"

#include "libs/sparse/cusparse_run.hpp"

namespace accel {

using sparse::Analysis;
using sparse::DenseMatrixDescriptor;
using sparse::Scalars;
using sparse::SDDMM;

Status CudaOperation<SDDMM>::run(const SDDMM&, const Checked& checked, const Plan& plan,
                                 std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<SDDMM>;
  const SDDMM& r = checked.request;
  if (r.c.rows == 0 || r.c.cols == 0) return Status();
  // No entry to compute: what is left to say is whether C is well-formed, as on every device.
  if (r.c.nnz == 0) {
    return sparse::check_structure_once(run, *plan.verdicts, r.kName, "c", r.c, views[Op::offsets], views[Op::indices])
        .status();
  }
  DenseMatrixDescriptor a(*plan.api, r.a, views[Op::a].data, r.c.dtype),
      b(*plan.api, r.b, views[Op::b].data, r.c.dtype);
  ACCEL_RETURN_IF_ERROR(a.status());
  ACCEL_RETURN_IF_ERROR(b.status());
  const Scalars s(r.c.dtype, r.alpha, r.beta);
  const cudaDataType compute = sparse::compute_type(r.c.dtype);
  const cusparseHandle_t handle = plan.state->handle();
  const cusparseOperation_t op_a = sparse::to_cusparse(r.op_a), op_b = sparse::to_cusparse(r.op_b);
  auto preprocess = [&](const Analysis& c) {
    return sparse::preprocessed(
        run,
        plan.api->cusparseSDDMM_preprocess(handle, op_a, op_b, s.alpha(), a.get(), b.get(), s.beta(), c.matrix, compute,
                                           CUSPARSE_SDDMM_ALG_DEFAULT, c.buffer),
        "cusparseSDDMM_preprocess");
  };
  const std::int64_t k = r.op_a == Transpose::none ? r.a.cols : r.a.rows;
  const sparse::AnalysisKey key = sparse::analysis_key(
      sparse::Kind::sddmm, r.c, static_cast<std::int64_t>(r.op_a) | static_cast<std::int64_t>(r.op_b) << 1,
      static_cast<std::int64_t>(r.a.order), k, r.a.ld, r.b.ld);
  ACCEL_ASSIGN_OR_RETURN(
      std::shared_ptr<const Analysis> analysis,
      sparse::analysis_of(
          r.kName, r.c, key, plan, views, run,
          [&](Analysis& c) -> Status {
            std::size_t bytes = 0;
            ACCEL_RETURN_IF_ERROR(sparse::cusparse_status(
                plan.api->cusparseSDDMM_bufferSize(handle, op_a, op_b, s.alpha(), a.get(), b.get(), s.beta(), c.matrix,
                                                   compute, CUSPARSE_SDDMM_ALG_DEFAULT, &bytes),
                "cusparseSDDMM_bufferSize"));
            ACCEL_RETURN_IF_ERROR(sparse::allocate_buffer(run, c, bytes));
            return preprocess(c);
          },
          preprocess, "c"));
  return sparse::launched(
      run,
      plan.api->cusparseSDDMM(handle, op_a, op_b, s.alpha(), a.get(), b.get(), s.beta(), analysis->matrix, compute,
                              CUSPARSE_SDDMM_ALG_DEFAULT, analysis->buffer),
      "cusparseSDDMM");
}

}  // namespace accel

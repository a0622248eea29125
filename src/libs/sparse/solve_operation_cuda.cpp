#include "libs/sparse/solve_operation_cuda.hpp"

#include "libs/sparse/cusparse_run.hpp"

namespace accel {

using sparse::Analysis;
using sparse::SpSV;

Status CudaOperation<SpSV>::run(const SpSV& r, const Checked&, const Plan& plan, std::span<const BufferView> views,
                                CudaRun& run) {
  using Op = Operation<SpSV>;
  const std::int64_t n = r.a.rows;
  if (n == 0) return Status();
  sparse::DenseVector x(*plan.api, n, views[Op::x].data, r.a.dtype), y(*plan.api, n, views[Op::y].data, r.a.dtype);
  ACCEL_RETURN_IF_ERROR(x.status());
  ACCEL_RETURN_IF_ERROR(y.status());
  const sparse::Scalars s(r.a.dtype, r.alpha, 0.0);
  const cudaDataType compute = sparse::compute_type(r.a.dtype);
  const cusparseHandle_t handle = plan.state->handle();
  const cusparseOperation_t op = sparse::to_cusparse(r.op);
  auto analyse = [&](const Analysis& a) {
    return sparse::launched(run,
                            plan.api->cusparseSpSV_analysis(handle, op, s.alpha(), a.matrix, x.get(), y.get(), compute,
                                                            CUSPARSE_SPSV_ALG_DEFAULT, a.spsv, a.buffer),
                            "cusparseSpSV_analysis");
  };
  auto build = [&](Analysis& a) -> Status {
    cusparseFillMode_t fill = r.fill == sparse::Fill::lower ? CUSPARSE_FILL_MODE_LOWER : CUSPARSE_FILL_MODE_UPPER;
    cusparseDiagType_t diagonal =
        r.diagonal == sparse::Diagonal::unit ? CUSPARSE_DIAG_TYPE_UNIT : CUSPARSE_DIAG_TYPE_NON_UNIT;
    ACCEL_RETURN_IF_ERROR(sparse::cusparse_status(
        plan.api->cusparseSpMatSetAttribute(a.matrix, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill),
        "setting the fill mode"));
    ACCEL_RETURN_IF_ERROR(sparse::cusparse_status(
        plan.api->cusparseSpMatSetAttribute(a.matrix, CUSPARSE_SPMAT_DIAG_TYPE, &diagonal, sizeof diagonal),
        "setting the diagonal type"));
    ACCEL_RETURN_IF_ERROR(
        sparse::cusparse_status(plan.api->cusparseSpSV_createDescr(&a.spsv), "cusparseSpSV_createDescr"));
    std::size_t bytes = 0;
    ACCEL_RETURN_IF_ERROR(
        sparse::cusparse_status(plan.api->cusparseSpSV_bufferSize(handle, op, s.alpha(), a.matrix, x.get(), y.get(),
                                                                  compute, CUSPARSE_SPSV_ALG_DEFAULT, a.spsv, &bytes),
                                "cusparseSpSV_bufferSize"));
    ACCEL_RETURN_IF_ERROR(sparse::allocate_buffer(run, a, bytes));
    return analyse(a);
  };
  const sparse::AnalysisKey key =
      sparse::analysis_key(sparse::Kind::spsv, r.a, static_cast<std::int64_t>(r.op), static_cast<std::int64_t>(r.fill),
                           static_cast<std::int64_t>(r.diagonal), 0, 0);
  bool analysed = false;
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const Analysis> analysis,
                         sparse::analysis_of(r.kName, r.a, key, plan, views, run, build, [&](const Analysis& a) {
                           analysed = true;
                           return analyse(a);
                         }));
  // A kept analysis solves with the values it was made with until told of the request's.
  if (!analysed && r.a.structure == sparse::Structure::fixed) {
    ACCEL_RETURN_IF_ERROR(
        sparse::launched(run,
                         plan.api->cusparseSpSV_updateMatrix(handle, analysis->spsv, views[Op::values].data,
                                                             CUSPARSE_SPSV_UPDATE_GENERAL),
                         "cusparseSpSV_updateMatrix"));
  }
  return sparse::launched(run,
                          plan.api->cusparseSpSV_solve(handle, op, s.alpha(), analysis->matrix, x.get(), y.get(),
                                                       compute, CUSPARSE_SPSV_ALG_DEFAULT, analysis->spsv),
                          "cusparseSpSV_solve");
}

}  // namespace accel

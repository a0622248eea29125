#include "libs/sparse/product_operation_cuda.hpp"

#include <fmt/format.h>

#include <limits>

#include "libs/sparse/cusparse_run.hpp"
#include "libs/sparse/spmv_kernel.hpp"

namespace accel {

using sparse::Analysis;
using sparse::DenseMatrixDescriptor;
using sparse::DenseVector;
using sparse::Scalars;
using sparse::SpMM;
using sparse::SpMV;

Result<CudaOperation<SpMV>::Plan> CudaOperation<SpMV>::plan(const SpMV& r, const Checked&, CudaTarget& target) {
  const bool own = r.a.format == sparse::Format::csr && r.op == Transpose::none &&
                   (r.a.dtype == DType::f32 || r.a.dtype == DType::f64) &&
                   r.a.rows < std::numeric_limits<std::int32_t>::max();
  if (!own) {
    ACCEL_ASSIGN_OR_RETURN(sparse::SparsePlan sparse, sparse::plan_sparse(target));
    return Plan{.sparse = sparse};
  }
  ACCEL_ASSIGN_OR_RETURN(sparse::SparsePlan sparse, sparse::plan_structure_checks(target));
  return Plan{.sparse = sparse,
              .lanes = sparse::csr_product_lanes(r.a.rows, r.a.nnz),
              .partials_bytes = sparse::csr_product_partials_bytes(r.a.nnz)};
}

Status CudaOperation<SpMV>::run(const SpMV& r, const Checked&, const Plan& spmv, std::span<const BufferView> views,
                                CudaRun& run) {
  using Op = Operation<SpMV>;
  const std::int64_t m = sparse::op_rows(r.a, r.op), k = sparse::op_cols(r.a, r.op);
  if (m == 0) return Status();
  if (spmv.lanes != 0) {
    ACCEL_ASSIGN_OR_RETURN(const sparse::PassedStructure structure,
                           sparse::check_structure_once(run, *spmv.sparse.verdicts, r.kName, "a", r.a,
                                                        views[Op::offsets], views[Op::indices]));
    const sparse::CsrProduct product{.wide = r.a.index == DType::i64,
                                     .f64 = r.a.dtype == DType::f64,
                                     .lanes = spmv.lanes,
                                     .rows = m,
                                     .nnz = r.a.nnz,
                                     .longest = structure.longest,
                                     .partials = static_cast<std::byte*>(run.workspace) + sparse::kPartialsOffset,
                                     .offsets = views[Op::offsets].data,
                                     .columns = views[Op::indices].data,
                                     .values = views[Op::values].data,
                                     .x = views[Op::x].data,
                                     .y = views[Op::y].data,
                                     .alpha = r.alpha,
                                     .beta = r.beta};
    return run.target.check(sparse::launch_csr_product(product, run.target.stream()), "the CSR product");
  }
  const sparse::SparsePlan& plan = spmv.sparse;
  DenseVector x(*plan.api, k, views[Op::x].data, r.a.dtype), y(*plan.api, m, views[Op::y].data, r.a.dtype);
  ACCEL_RETURN_IF_ERROR(x.status());
  ACCEL_RETURN_IF_ERROR(y.status());
  const Scalars s(r.a.dtype, r.alpha, r.beta);
  const cudaDataType compute = sparse::compute_type(r.a.dtype);
  const cusparseHandle_t handle = plan.state->handle();
  const cusparseOperation_t op = sparse::to_cusparse(r.op);
  auto preprocess = [&](const Analysis& a) {
    return sparse::preprocessed(
        run,
        plan.api->cusparseSpMV_preprocess(handle, op, s.alpha(), a.matrix, x.get(), s.beta(), y.get(), compute,
                                          CUSPARSE_SPMV_ALG_DEFAULT, a.buffer),
        "cusparseSpMV_preprocess");
  };
  const sparse::AnalysisKey key =
      sparse::analysis_key(sparse::Kind::spmv, r.a, static_cast<std::int64_t>(r.op), 0, 0, 0, 0);
  ACCEL_ASSIGN_OR_RETURN(
      std::shared_ptr<const Analysis> analysis,
      sparse::analysis_of(
          r.kName, r.a, key, plan, views, run,
          [&](Analysis& a) -> Status {
            std::size_t bytes = 0;
            ACCEL_RETURN_IF_ERROR(sparse::cusparse_status(
                plan.api->cusparseSpMV_bufferSize(handle, op, s.alpha(), a.matrix, x.get(), s.beta(), y.get(), compute,
                                                  CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
                "cusparseSpMV_bufferSize"));
            ACCEL_RETURN_IF_ERROR(sparse::allocate_buffer(run, a, bytes));
            return preprocess(a);
          },
          preprocess));
  return sparse::launched(run,
                          plan.api->cusparseSpMV(handle, op, s.alpha(), analysis->matrix, x.get(), s.beta(), y.get(),
                                                 compute, CUSPARSE_SPMV_ALG_DEFAULT, analysis->buffer),
                          "cusparseSpMV");
}

Result<CudaOperation<SpMM>::Plan> CudaOperation<SpMM>::plan(const SpMM&, const Checked& checked, CudaTarget& target) {
  const SpMM& r = checked.request;
  if (r.a.format == sparse::Format::blocked_ell) {
    if (r.a.index != DType::i32) {
      return not_supported(fmt::format("{}: cuSPARSE's blocked-ELL SpMM takes i32 indices only; a's are {}", r.kName,
                                       to_string(r.a.index)));
    }
    if (r.op_a != Transpose::none) {
      return not_supported(
          fmt::format("{}: cuSPARSE's blocked-ELL SpMM does not transpose A (op_a must be none)", r.kName));
    }
  }
  return sparse::plan_sparse(target);
}

Status CudaOperation<SpMM>::run(const SpMM&, const Checked& checked, const Plan& plan,
                                std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<SpMM>;
  const SpMM& r = checked.request;
  if (r.c.rows == 0 || r.c.cols == 0) return Status();
  DenseMatrixDescriptor b(*plan.api, r.b, views[Op::b].data, r.a.dtype),
      c(*plan.api, r.c, views[Op::c].data, r.a.dtype);
  ACCEL_RETURN_IF_ERROR(b.status());
  ACCEL_RETURN_IF_ERROR(c.status());
  const Scalars s(r.a.dtype, r.alpha, r.beta);
  const cudaDataType compute = sparse::compute_type(r.a.dtype);
  const cusparseHandle_t handle = plan.state->handle();
  const cusparseOperation_t op_a = sparse::to_cusparse(r.op_a), op_b = sparse::to_cusparse(r.op_b);
  const cusparseSpMMAlg_t algorithm =
      r.a.format == sparse::Format::blocked_ell ? CUSPARSE_SPMM_BLOCKED_ELL_ALG1 : CUSPARSE_SPMM_ALG_DEFAULT;
  auto preprocess = [&](const Analysis& a) {
    return sparse::preprocessed(run,
                                plan.api->cusparseSpMM_preprocess(handle, op_a, op_b, s.alpha(), a.matrix, b.get(),
                                                                  s.beta(), c.get(), compute, algorithm, a.buffer),
                                "cusparseSpMM_preprocess");
  };
  const sparse::AnalysisKey key = sparse::analysis_key(
      sparse::Kind::spmm, r.a, static_cast<std::int64_t>(r.op_a) | static_cast<std::int64_t>(r.op_b) << 1,
      static_cast<std::int64_t>(r.b.order), r.c.cols, r.b.ld, r.c.ld);
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const Analysis> analysis,
                         sparse::analysis_of(
                             r.kName, r.a, key, plan, views, run,
                             [&](Analysis& a) -> Status {
                               std::size_t bytes = 0;
                               ACCEL_RETURN_IF_ERROR(sparse::cusparse_status(
                                   plan.api->cusparseSpMM_bufferSize(handle, op_a, op_b, s.alpha(), a.matrix, b.get(),
                                                                     s.beta(), c.get(), compute, algorithm, &bytes),
                                   "cusparseSpMM_bufferSize"));
                               ACCEL_RETURN_IF_ERROR(sparse::allocate_buffer(run, a, bytes));
                               return preprocess(a);
                             },
                             preprocess));
  return sparse::launched(run,
                          plan.api->cusparseSpMM(handle, op_a, op_b, s.alpha(), analysis->matrix, b.get(), s.beta(),
                                                 c.get(), compute, algorithm, analysis->buffer),
                          "cusparseSpMM");
}

}  // namespace accel

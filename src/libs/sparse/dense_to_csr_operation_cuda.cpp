#include "libs/sparse/dense_to_csr_operation_cuda.hpp"

#include "libs/sparse/cusparse_run.hpp"

namespace accel {

using sparse::DenseToCsr;
using sparse::DenseToCsrCount;

namespace {

constexpr cusparseDenseToSparseAlg_t kAlgorithm = CUSPARSE_DENSETOSPARSE_ALG_DEFAULT;

// cuSPARSE's analysis of a dense matrix into a CSR over `offsets`, which it writes; the descriptors and the buffer
// live as long as this does (the buffer freed in stream order).
class Conversion {
 public:
  Conversion(const sparse::SparsePlan& plan, const sparse::DenseMatrix& a, void* data, DType dtype, DType index,
             void* offsets, CudaRun& run)
      : api_(*plan.api),
        handle_(plan.state->handle()),
        run_(run),
        dense_(api_, a, data, dtype),
        buffer_(run.target.stream()) {
    const cusparseIndexType_t type = index == DType::i64 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
    created_ = api_.cusparseCreateCsr(&csr_, a.rows, a.cols, 0, offsets, nullptr, nullptr, type, type,
                                      CUSPARSE_INDEX_BASE_ZERO, sparse::to_cuda(dtype));
  }
  ~Conversion() {
    if (csr_ != nullptr) api_.cusparseDestroySpMat(csr_);
  }
  Conversion(const Conversion&) = delete;
  Conversion& operator=(const Conversion&) = delete;

  // The analysis: writes the offsets, and answers nnz.
  Result<std::int64_t> analyse() {
    ACCEL_RETURN_IF_ERROR(dense_.status());
    ACCEL_RETURN_IF_ERROR(sparse::cusparse_status(created_, "creating the CSR's descriptor"));
    std::size_t bytes = 0;
    ACCEL_RETURN_IF_ERROR(
        sparse::cusparse_status(api_.cusparseDenseToSparse_bufferSize(handle_, dense_.get(), csr_, kAlgorithm, &bytes),
                                "cusparseDenseToSparse_bufferSize"));
    ACCEL_RETURN_IF_ERROR(buffer_.allocate(run_.target, bytes, "cuSPARSE's buffer"));
    ACCEL_RETURN_IF_ERROR(sparse::launched(
        run_, api_.cusparseDenseToSparse_analysis(handle_, dense_.get(), csr_, kAlgorithm, buffer_.data()),
        "cusparseDenseToSparse_analysis"));
    std::int64_t rows = 0, cols = 0, nnz = 0;
    ACCEL_RETURN_IF_ERROR(
        sparse::cusparse_status(api_.cusparseSpMatGetSize(csr_, &rows, &cols, &nnz), "cusparseSpMatGetSize"));
    return nnz;
  }

  Status convert(void* offsets, void* indices, void* values) {
    ACCEL_RETURN_IF_ERROR(
        sparse::cusparse_status(api_.cusparseCsrSetPointers(csr_, offsets, indices, values), "cusparseCsrSetPointers"));
    return sparse::launched(run_,
                            api_.cusparseDenseToSparse_convert(handle_, dense_.get(), csr_, kAlgorithm, buffer_.data()),
                            "cusparseDenseToSparse_convert");
  }

 private:
  const sparse::CusparseApi& api_;
  cusparseHandle_t handle_;
  CudaRun& run_;
  sparse::DenseMatrixDescriptor dense_;
  cusparseSpMatDescr_t csr_ = nullptr;
  cusparseStatus_t created_ = CUSPARSE_STATUS_SUCCESS;
  sparse::StreamBuffer buffer_;
};

// A matrix with no element: its offsets are all zero, and cuSPARSE is not asked.
Status zero_offsets(CudaRun& run, std::int64_t rows, DType index, void* offsets) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(rows + 1) * size_of(index);
  return run.target.check(cudaMemsetAsync(offsets, 0, bytes, run.target.stream()), "zeroing the CSR's offsets");
}

}  // namespace

Status CudaOperation<DenseToCsrCount>::run(const DenseToCsrCount&, const Checked& checked, const Plan& plan,
                                           std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<DenseToCsrCount>;
  const DenseToCsrCount& r = checked.request;
  void* const offsets = views[Op::offsets].data;
  if (r.a.rows == 0 || r.a.cols == 0) return zero_offsets(run, r.a.rows, r.index, offsets);
  Conversion conversion(plan, r.a, views[Op::a].data, r.dtype, r.index, offsets, run);
  return conversion.analyse().status();
}

Status CudaOperation<DenseToCsr>::run(const DenseToCsr&, const Checked& checked, const Plan& plan,
                                      std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<DenseToCsr>;
  const DenseToCsr& r = checked.request;
  void* const offsets = views[Op::offsets].data;
  if (r.a.rows == 0 || r.a.cols == 0) {
    ACCEL_RETURN_IF_ERROR(sparse::check_output_nnz(r.kName, "out", r.out.nnz, 0, DenseToCsrCount::kName));
    return zero_offsets(run, r.a.rows, r.out.index, offsets);
  }
  Conversion conversion(plan, r.a, views[Op::a].data, r.out.dtype, r.out.index, offsets, run);
  ACCEL_ASSIGN_OR_RETURN(std::int64_t nnz, conversion.analyse());
  ACCEL_RETURN_IF_ERROR(sparse::check_output_nnz(r.kName, "out", r.out.nnz, nnz, DenseToCsrCount::kName));
  if (nnz == 0) return Status();
  return conversion.convert(offsets, views[Op::indices].data, views[Op::values].data);
}

}  // namespace accel

// What the sparse requests' CUDA runs share: their scalars in cuSPARSE's compute type, dense descriptors that live
// for one run, and the analysis of a structure found in the stream's cache or made after the structural check.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "libs/sparse/cusparse_state.hpp"

namespace accel::sparse {

// The scalars of a request in its compute type, for cuSPARSE's host pointer mode.
struct Scalars {
  float alpha32 = 0, beta32 = 0;
  double alpha64 = 0, beta64 = 0;
  bool wide = false;

  Scalars(DType dtype, double alpha, double beta)
      : alpha32(static_cast<float>(alpha)),
        beta32(static_cast<float>(beta)),
        alpha64(alpha),
        beta64(beta),
        wide(dtype == DType::f64) {}
  [[nodiscard]] const void* alpha() const { return wide ? static_cast<const void*>(&alpha64) : &alpha32; }
  [[nodiscard]] const void* beta() const { return wide ? static_cast<const void*>(&beta64) : &beta32; }
};

inline cusparseOperation_t to_cusparse(Transpose op) {
  return op == Transpose::none ? CUSPARSE_OPERATION_NON_TRANSPOSE : CUSPARSE_OPERATION_TRANSPOSE;
}
inline cusparseOrder_t to_cusparse(MatrixOrder order) {
  return order == MatrixOrder::row_major ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
}

// Dense descriptors of one run; cuSPARSE copies what it needs at each call, so they die with the run.
class DenseVector {
 public:
  DenseVector(const CusparseApi& api, std::int64_t size, void* data, DType dtype) : api_(api) {
    status_ = api.cusparseCreateDnVec(&descriptor_, size, data, to_cuda(dtype));
  }
  ~DenseVector() {
    if (descriptor_ != nullptr) api_.cusparseDestroyDnVec(descriptor_);
  }
  DenseVector(const DenseVector&) = delete;
  DenseVector& operator=(const DenseVector&) = delete;
  [[nodiscard]] Status status() const { return cusparse_status(status_, "cusparseCreateDnVec"); }
  [[nodiscard]] cusparseDnVecDescr_t get() const { return descriptor_; }

 private:
  const CusparseApi& api_;
  cusparseDnVecDescr_t descriptor_ = nullptr;
  cusparseStatus_t status_;
};

class DenseMatrixDescriptor {
 public:
  DenseMatrixDescriptor(const CusparseApi& api, const DenseMatrix& d, void* data, DType dtype) : api_(api) {
    status_ = api.cusparseCreateDnMat(&descriptor_, d.rows, d.cols, d.ld, data, to_cuda(dtype), to_cusparse(d.order));
  }
  ~DenseMatrixDescriptor() {
    if (descriptor_ != nullptr) api_.cusparseDestroyDnMat(descriptor_);
  }
  DenseMatrixDescriptor(const DenseMatrixDescriptor&) = delete;
  DenseMatrixDescriptor& operator=(const DenseMatrixDescriptor&) = delete;
  [[nodiscard]] Status status() const { return cusparse_status(status_, "cusparseCreateDnMat"); }
  [[nodiscard]] cusparseDnMatDescr_t get() const { return descriptor_; }

 private:
  const CusparseApi& api_;
  cusparseDnMatDescr_t descriptor_ = nullptr;
  cusparseStatus_t status_;
};

// Preprocessing speeds up later calls where cuSPARSE has it for the format and algorithm; where it has none, the
// call answers not supported and the analysis is the descriptor and buffer alone.
inline Status preprocessed(CudaRun& run, cusparseStatus_t status, std::string_view what) {
  if (status == CUSPARSE_STATUS_NOT_SUPPORTED) return Status();
  return launched(run, status, what);
}

// The analysis of `request`'s structure: found in the stream's cache, or made by `build` after the structural
// check. A matrix whose structure may have changed (checked_each_use) is checked again, and `refresh` redoes its
// analysis, unless its index arrays still have the versions of the last check (docs/ARCHITECTURE.md, "Versions of a
// buffer's contents"): equal versions, equal contents. `views` start with the matrix's arrays; `operand` names it in
// errors.
template <class Build, class Refresh>
Result<std::shared_ptr<const Analysis>> analysis_of(std::string_view name, const Matrix& a, const AnalysisKey& key,
                                                    const SparsePlan& plan, std::span<const BufferView> views,
                                                    CudaRun& run, Build&& build, Refresh&& refresh,
                                                    std::string_view operand = "a") {
  const std::array<std::uint64_t, 2> versions{views[0].version, views[1].version};
  const std::array<std::uint64_t, 2> recorded =
      versions[0] != 0 && versions[1] != 0 ? versions : std::array<std::uint64_t, 2>{};
  bool fresh = false;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(key.data()), sizeof key);
  ACCEL_ASSIGN_OR_RETURN(
      std::shared_ptr<const Analysis> analysis,
      plan.state->analyses().get(bytes, [&]() -> Result<std::shared_ptr<const Analysis>> {
        ACCEL_RETURN_IF_ERROR(check_structure_on_device(run, name, operand, a, views[0], views[1]).status());
        auto made = std::make_shared<Analysis>(*plan.api);
        ACCEL_ASSIGN_OR_RETURN(made->matrix, make_descriptor(*plan.api, a, views[0], views[1], views[2]));
        ACCEL_RETURN_IF_ERROR(build(*made));
        made->structure_versions = recorded;
        fresh = true;
        return std::shared_ptr<const Analysis>(std::move(made));
      }));
  ACCEL_RETURN_IF_ERROR(
      cusparse_status(plan.api->cusparseSpMatSetValues(analysis->matrix, views[2].data), "cusparseSpMatSetValues"));
  if (!fresh && a.structure == Structure::checked_each_use) {
    const bool unchanged = recorded[0] != 0 && analysis->structure_versions == recorded;
    plan.verdicts->count(unchanged);
    if (!unchanged) {
      analysis->structure_versions = {};  // until the check and the new analysis have both succeeded
      ACCEL_RETURN_IF_ERROR(check_structure_on_device(run, name, operand, a, views[0], views[1]).status());
      ACCEL_RETURN_IF_ERROR(refresh(*analysis));
      analysis->structure_versions = recorded;
    }
  }
  return analysis;
}

}  // namespace accel::sparse

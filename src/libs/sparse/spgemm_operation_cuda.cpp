#include "libs/sparse/spgemm_operation_cuda.hpp"

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "libs/sparse/cusparse_run.hpp"
#include "libs/sparse/scale_kernel.hpp"
#include "operation/cuda_copy.hpp"

namespace accel {

using sparse::Matrix;
using sparse::SpGemm;
using sparse::SpGemmCount;
using sparse::SpGemmWork;

namespace {

constexpr cusparseOperation_t kNone = CUSPARSE_OPERATION_NON_TRANSPOSE;
constexpr cusparseSpGEMMAlg_t kAlgorithm = CUSPARSE_SPGEMM_DEFAULT;
// Both requests lay out A's and B's arrays first, then C's offsets.
enum Slot : std::size_t { a_offsets, a_indices, a_values, b_offsets, b_indices, b_values, c_offsets };

Status check_i32(std::string_view request, const Matrix& a) {
  if (a.index == DType::i32) return Status();
  return not_supported(
      fmt::format("{}: cuSPARSE's SpGEMM takes i32 indices only; these matrices' are {}", request, to_string(a.index)));
}

// A product with no term: C has no entry, and cuSPARSE is not asked.
bool empty_product(const Matrix& a, const Matrix& b) { return a.rows == 0 || b.cols == 0 || a.nnz == 0 || b.nnz == 0; }

// Each check costs a wait: A·A (or B over A's very arrays and shape) is checked once, and arrays the stream has
// passed and nothing has written since are not checked again.
Status check_factors(CudaRun& run, sparse::StructureVerdicts& verdicts, std::string_view name, const Matrix& a,
                     const Matrix& b, std::span<const BufferView> views) {
  ACCEL_RETURN_IF_ERROR(
      sparse::check_structure_once(run, verdicts, name, "a", a, views[a_offsets], views[a_indices]).status());
  const bool same_structure = a.format == b.format && a.index == b.index && a.rows == b.rows && a.cols == b.cols &&
                              a.nnz == b.nnz && a.offsets == b.offsets && a.indices == b.indices;
  if (same_structure) return Status();
  return sparse::check_structure_once(run, verdicts, name, "b", b, views[b_offsets], views[b_indices]).status();
}

Status zero_offsets(CudaRun& run, const Matrix& a, std::span<const BufferView> views) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(a.rows + 1) * sizeof(std::int32_t);
  return run.target.check(cudaMemsetAsync(views[c_offsets].data, 0, bytes, run.target.stream()),
                          "zeroing the offsets of an empty product");
}

// Where C's columns and values go once the product's nnz is known: two buffers of nnz entries, or an error.
using Placement = std::function<Result<std::pair<void*, void*>>(std::int64_t nnz)>;

// One product by cuSPARSE's SpGEMM steps (work estimation, compute, then copy, which writes C's offsets, columns and
// values together): A and B checked first, C's columns and values placed by `place`. cuSPARSE's structure-reuse
// steps were tried first, but their nnz step leaves C's offsets unwritten and a second copy step wrote wrong ones
// (H100), so a count and its fill each multiply in full.
Status multiply(std::string_view name, const Matrix& a, const Matrix& b, double alpha,
                std::span<const BufferView> views, const sparse::SparsePlan& plan, CudaRun& run,
                const Placement& place) {
  ACCEL_RETURN_IF_ERROR(check_factors(run, *plan.verdicts, name, a, b, views));
  SpGemmWork work(*plan.api);
  sparse::StreamBuffer estimation(run.target.stream()), product(run.target.stream());
  ACCEL_ASSIGN_OR_RETURN(work.a,
                         sparse::make_descriptor(*plan.api, a, views[a_offsets], views[a_indices], views[a_values]));
  ACCEL_ASSIGN_OR_RETURN(work.b,
                         sparse::make_descriptor(*plan.api, b, views[b_offsets], views[b_indices], views[b_values]));
  ACCEL_RETURN_IF_ERROR(
      sparse::cusparse_status(plan.api->cusparseCreateCsr(&work.c, a.rows, b.cols, 0, views[c_offsets].data, nullptr,
                                                          nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                                          CUSPARSE_INDEX_BASE_ZERO, sparse::to_cuda(a.dtype)),
                              "creating C's descriptor"));
  ACCEL_RETURN_IF_ERROR(
      sparse::cusparse_status(plan.api->cusparseSpGEMM_createDescr(&work.spgemm), "cusparseSpGEMM_createDescr"));
  const cusparseHandle_t handle = plan.state->handle();
  const sparse::Scalars s(a.dtype, alpha, 0.0);
  const cudaDataType compute = sparse::compute_type(a.dtype);
  std::size_t size1 = 0, size2 = 0;
  auto estimate = [&](void* buffer) {
    return sparse::launched(
        run,
        plan.api->cusparseSpGEMM_workEstimation(handle, kNone, kNone, s.alpha(), work.a, work.b, s.beta(), work.c,
                                                compute, kAlgorithm, work.spgemm, &size1, buffer),
        "cusparseSpGEMM_workEstimation");
  };
  ACCEL_RETURN_IF_ERROR(estimate(nullptr));
  ACCEL_RETURN_IF_ERROR(estimation.allocate(run.target, size1, "cuSPARSE's SpGEMM buffer"));
  ACCEL_RETURN_IF_ERROR(estimate(estimation.data()));
  auto multiply_step = [&](void* buffer) {
    return sparse::launched(run,
                            plan.api->cusparseSpGEMM_compute(handle, kNone, kNone, s.alpha(), work.a, work.b, s.beta(),
                                                             work.c, compute, kAlgorithm, work.spgemm, &size2, buffer),
                            "cusparseSpGEMM_compute");
  };
  ACCEL_RETURN_IF_ERROR(multiply_step(nullptr));
  ACCEL_RETURN_IF_ERROR(product.allocate(run.target, size2, "cuSPARSE's SpGEMM buffer"));
  ACCEL_RETURN_IF_ERROR(multiply_step(product.data()));
  std::int64_t rows = 0, cols = 0, nnz = 0;
  ACCEL_RETURN_IF_ERROR(
      sparse::cusparse_status(plan.api->cusparseSpMatGetSize(work.c, &rows, &cols, &nnz), "cusparseSpMatGetSize"));
  ACCEL_ASSIGN_OR_RETURN(auto placed, place(nnz));
  if (nnz == 0) return zero_offsets(run, a, views);
  ACCEL_RETURN_IF_ERROR(sparse::cusparse_status(
      plan.api->cusparseCsrSetPointers(work.c, views[c_offsets].data, placed.first, placed.second),
      "cusparseCsrSetPointers"));
  return sparse::launched(run,
                          plan.api->cusparseSpGEMM_copy(handle, kNone, kNone, s.alpha(), work.a, work.b, s.beta(),
                                                        work.c, compute, kAlgorithm, work.spgemm),
                          "cusparseSpGEMM_copy");
}

// The product the stream's last count kept, if it is A·B as A and B are now and C's offsets are still the ones it
// wrote; taken out of the state, so that its memory goes once this fill has copied it (or is C's, handed over).
std::shared_ptr<const sparse::CountedProduct> take_counted(const SpGemm& r, const sparse::SparsePlan& plan,
                                                           std::span<const BufferView> views) {
  const std::optional<sparse::CountedKey> key = sparse::counted_key(r.a, r.b, views, views[c_offsets].version);
  if (!key) return nullptr;
  const auto bytes = std::as_bytes(std::span(*key));
  cache::Cache<sparse::CountedProduct>& products = plan.state->counted_products();
  std::shared_ptr<const sparse::CountedProduct> counted = products.peek(bytes);
  if (counted != nullptr) products.erase(bytes);
  return counted;
}

// Hands one of the counted product's arrays to C's `buffer` when the device can move the buffer into it (a buffer
// this request is the first to use, of the array's size: CudaTarget::adopt), so that nothing is copied; answers
// whether it did.
Result<bool> hand_over(CudaRun& run, sparse::CusparseState& state, const BufferHandle& buffer,
                       sparse::StreamBuffer& scratch, std::uint64_t bytes) {
  ACCEL_ASSIGN_OR_RETURN(const bool handed_over, run.target.adopt(buffer, run.write_version, scratch.data(), bytes));
  state.count_handover(handed_over);
  if (handed_over) scratch.release();
  return handed_over;
}

// C's columns and values from the counted product, handed over or copied, the values times alpha (the count used
// 1). A and B were checked by the count and have not been written since.
Status fill_from_count(const SpGemm& r, const sparse::CountedProduct& counted, sparse::CusparseState& state,
                       std::span<const BufferView> views, CudaRun& run) {
  using Op = Operation<SpGemm>;
  ACCEL_RETURN_IF_ERROR(sparse::check_output_nnz(r.kName, "c", r.c.nnz, counted.nnz, SpGemmCount::kName));
  if (counted.nnz == 0) return Status();
  const auto entries = static_cast<std::size_t>(counted.nnz);
  cudaStream_t stream = run.target.stream();
  const std::uint64_t column_bytes = entries * sizeof(std::int32_t);
  const void* columns = counted.columns.data();
  ACCEL_ASSIGN_OR_RETURN(const bool columns_moved, hand_over(run, state, r.c.indices, counted.columns, column_bytes));
  if (!columns_moved) {
    ACCEL_RETURN_IF_ERROR(run.target.check(copy_on_device(views[Op::c_indices].data, columns, column_bytes, stream),
                                           "copying C's counted columns"));
  }
  const std::uint64_t value_bytes = entries * size_of(r.a.dtype);
  void* values = counted.values.data();
  ACCEL_ASSIGN_OR_RETURN(const bool values_moved, hand_over(run, state, r.c.values, counted.values, value_bytes));
  void* to = values_moved ? values : views[Op::c_values].data;  // the request's view of a moved buffer is stale
  if (r.alpha != 1.0) {
    return run.target.check(
        sparse::launch_scaled_copy(r.a.dtype == DType::f64, values, to, counted.nnz, r.alpha, stream),
        "scaling C's counted values by alpha");
  }
  if (values_moved) return Status();
  return run.target.check(copy_on_device(to, values, value_bytes, stream), "copying C's counted values");
}

}  // namespace

Result<CudaOperation<SpGemmCount>::Plan> CudaOperation<SpGemmCount>::plan(const SpGemmCount& request, const Checked&,
                                                                          CudaTarget& target) {
  ACCEL_RETURN_IF_ERROR(check_i32(SpGemmCount::kName, request.a));
  return sparse::plan_sparse(target);
}

// The count multiplies into scratch columns and values, kept in the stream's state for the SpGemm that follows
// when A's and B's versions are tracked, else freed once the copy that wrote C's offsets has run.
Status CudaOperation<SpGemmCount>::run(const SpGemmCount& r, const Checked&, const Plan& plan,
                                       std::span<const BufferView> views, CudaRun& run) {
  if (empty_product(r.a, r.b)) {
    ACCEL_RETURN_IF_ERROR(check_factors(run, *plan.verdicts, r.kName, r.a, r.b, views));
    return zero_offsets(run, r.a, views);
  }
  auto product = std::make_shared<sparse::CountedProduct>(run.target.stream());
  ACCEL_RETURN_IF_ERROR(
      multiply(r.kName, r.a, r.b, 1.0, views, plan, run, [&](std::int64_t nnz) -> Result<std::pair<void*, void*>> {
        const auto entries = static_cast<std::size_t>(nnz);
        product->nnz = nnz;
        product->bytes = entries * (sizeof(std::int32_t) + size_of(r.a.dtype));
        ACCEL_RETURN_IF_ERROR(
            product->columns.allocate(run.target, entries * sizeof(std::int32_t), "scratch columns of C"));
        ACCEL_RETURN_IF_ERROR(
            product->values.allocate(run.target, entries * size_of(r.a.dtype), "scratch values of C"));
        return std::make_pair(product->columns.data(), product->values.data());
      }));
  const std::optional<sparse::CountedKey> key = sparse::counted_key(r.a, r.b, views, run.write_version);
  if (key) plan.state->counted_products().put(std::as_bytes(std::span(*key)), std::move(product));
  return Status();
}

Result<CudaOperation<SpGemm>::Plan> CudaOperation<SpGemm>::plan(const SpGemm& request, const Checked&,
                                                                CudaTarget& target) {
  ACCEL_RETURN_IF_ERROR(check_i32(SpGemm::kName, request.a));
  return sparse::plan_sparse(target);
}

Status CudaOperation<SpGemm>::run(const SpGemm& r, const Checked&, const Plan& plan, std::span<const BufferView> views,
                                  CudaRun& run) {
  using Op = Operation<SpGemm>;
  if (auto counted = take_counted(r, plan, views)) return fill_from_count(r, *counted, *plan.state, views, run);
  if (empty_product(r.a, r.b)) {
    ACCEL_RETURN_IF_ERROR(check_factors(run, *plan.verdicts, r.kName, r.a, r.b, views));
    ACCEL_RETURN_IF_ERROR(sparse::check_output_nnz(r.kName, "c", r.c.nnz, 0, SpGemmCount::kName));
    return zero_offsets(run, r.a, views);
  }
  return multiply(r.kName, r.a, r.b, r.alpha, views, plan, run,
                  [&](std::int64_t nnz) -> Result<std::pair<void*, void*>> {
                    ACCEL_RETURN_IF_ERROR(sparse::check_output_nnz(r.kName, "c", r.c.nnz, nnz, SpGemmCount::kName));
                    return std::make_pair(views[Op::c_indices].data, views[Op::c_values].data);
                  });
}

}  // namespace accel

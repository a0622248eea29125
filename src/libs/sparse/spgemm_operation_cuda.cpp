#include "libs/sparse/spgemm_operation_cuda.hpp"

#include <fmt/format.h>

#include "libs/sparse/cusparse_run.hpp"

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

// Whether the caller promised A's and B's structures: only then may a count's state serve a later fill.
bool fixed(const Matrix& a, const Matrix& b) {
  return a.structure == sparse::Structure::fixed && b.structure == sparse::Structure::fixed;
}

sparse::SpGemmKey key_of(const Matrix& a, const Matrix& b, const BufferHandle& offsets) {
  auto handle = [](const BufferHandle& h) { return std::int64_t{h.device} << 32 | h.slot; };
  auto generation = [](const BufferHandle& h) { return static_cast<std::int64_t>(h.generation); };
  return {static_cast<std::int64_t>(a.index) | static_cast<std::int64_t>(a.dtype) << 8,
          a.rows,
          a.cols,
          a.nnz,
          handle(a.offsets),
          generation(a.offsets),
          a.offsets.epoch,
          handle(a.indices),
          generation(a.indices),
          a.indices.epoch,
          b.cols,
          b.nnz,
          handle(b.offsets),
          generation(b.offsets),
          b.offsets.epoch,
          handle(b.indices),
          generation(b.indices),
          b.indices.epoch,
          handle(offsets),
          generation(offsets),
          offsets.epoch,
          0,
          0,
          0};
}

std::span<const std::byte> bytes_of(const sparse::SpGemmKey& key) {
  return {reinterpret_cast<const std::byte*>(key.data()), sizeof key};
}

Status allocate(CudaRun& run, void*& buffer, std::size_t bytes) {
  if (bytes == 0) return Status();
  return run.target.check(cudaMallocFromPoolAsync(&buffer, bytes, run.target.pool(), run.target.stream()),
                          "allocating cuSPARSE's SpGEMM buffer");
}

// A buffer of one step, freed in stream order after the work that used it.
struct StepBuffer {
  cudaStream_t stream;
  void* data = nullptr;
  ~StepBuffer() {
    if (data != nullptr) cudaFreeAsync(data, stream);
  }
};

Status check_factors(CudaRun& run, std::string_view name, const Matrix& a, const Matrix& b,
                     std::span<const BufferView> views) {
  ACCEL_RETURN_IF_ERROR(sparse::check_structure_on_device(run, name, "a", a, views[a_offsets], views[a_indices]));
  return sparse::check_structure_on_device(run, name, "b", b, views[b_offsets], views[b_indices]);
}

Status zero_offsets(CudaRun& run, const Matrix& a, std::span<const BufferView> views) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(a.rows + 1) * sizeof(std::int32_t);
  return run.target.check(cudaMemsetAsync(views[c_offsets].data, 0, bytes, run.target.stream()),
                          "zeroing the offsets of an empty product");
}

// The count: A and B checked, then cuSPARSE's work estimation and nnz steps, which write C's offsets.
Result<std::shared_ptr<SpGemmWork>> count(std::string_view name, const Matrix& a, const Matrix& b,
                                          std::span<const BufferView> views, const sparse::SparsePlan& plan,
                                          CudaRun& run) {
  ACCEL_RETURN_IF_ERROR(check_factors(run, name, a, b, views));
  auto work = std::make_shared<SpGemmWork>();
  work->stream = run.target.stream();
  ACCEL_ASSIGN_OR_RETURN(work->a, sparse::make_descriptor(a, views[a_offsets], views[a_indices], views[a_values]));
  ACCEL_ASSIGN_OR_RETURN(work->b, sparse::make_descriptor(b, views[b_offsets], views[b_indices], views[b_values]));
  ACCEL_RETURN_IF_ERROR(sparse::cusparse_status(
      cusparseCreateCsr(&work->c, a.rows, b.cols, 0, views[c_offsets].data, nullptr, nullptr, CUSPARSE_INDEX_32I,
                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, sparse::to_cuda(a.dtype)),
      "creating C's descriptor"));
  ACCEL_RETURN_IF_ERROR(
      sparse::cusparse_status(cusparseSpGEMM_createDescr(&work->spgemm), "cusparseSpGEMM_createDescr"));
  const cusparseHandle_t handle = plan.state->handle();
  StepBuffer estimation{.stream = work->stream}, nnz{.stream = work->stream};
  std::size_t size1 = 0, size2 = 0, size3 = 0, size4 = 0;
  auto estimate = [&](void* buffer) {
    return sparse::launched(run,
                            cusparseSpGEMMreuse_workEstimation(handle, kNone, kNone, work->a, work->b, work->c,
                                                               kAlgorithm, work->spgemm, &size1, buffer),
                            "cusparseSpGEMMreuse_workEstimation");
  };
  ACCEL_RETURN_IF_ERROR(estimate(nullptr));
  ACCEL_RETURN_IF_ERROR(allocate(run, estimation.data, size1));
  ACCEL_RETURN_IF_ERROR(estimate(estimation.data));
  auto count_nnz = [&](void* buffer2, void* buffer3, void* buffer4) {
    return sparse::launched(run,
                            cusparseSpGEMMreuse_nnz(handle, kNone, kNone, work->a, work->b, work->c, kAlgorithm,
                                                    work->spgemm, &size2, buffer2, &size3, buffer3, &size4, buffer4),
                            "cusparseSpGEMMreuse_nnz");
  };
  ACCEL_RETURN_IF_ERROR(count_nnz(nullptr, nullptr, nullptr));
  ACCEL_RETURN_IF_ERROR(allocate(run, nnz.data, size2));
  ACCEL_RETURN_IF_ERROR(allocate(run, work->kept[0], size3));
  ACCEL_RETURN_IF_ERROR(allocate(run, work->kept[1], size4));
  ACCEL_RETURN_IF_ERROR(count_nnz(nnz.data, work->kept[0], work->kept[1]));
  work->bytes = size3 + size4;
  std::int64_t rows = 0, cols = 0;
  ACCEL_RETURN_IF_ERROR(
      sparse::cusparse_status(cusparseSpMatGetSize(work->c, &rows, &cols, &work->nnz), "cusparseSpMatGetSize"));
  return work;
}

}  // namespace

Result<CudaOperation<SpGemmCount>::Plan> CudaOperation<SpGemmCount>::plan(const SpGemmCount& request, const Checked&,
                                                                          CudaTarget& target) {
  ACCEL_RETURN_IF_ERROR(check_i32(SpGemmCount::kName, request.a));
  return sparse::plan_sparse(target);
}

Status CudaOperation<SpGemmCount>::run(const SpGemmCount& r, const Checked&, const Plan& plan,
                                       std::span<const BufferView> views, CudaRun& run) {
  if (empty_product(r.a, r.b)) {
    ACCEL_RETURN_IF_ERROR(check_factors(run, r.kName, r.a, r.b, views));
    return zero_offsets(run, r.a, views);
  }
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<SpGemmWork> work, count(r.kName, r.a, r.b, views, plan, run));
  if (fixed(r.a, r.b)) plan.state->products().put(bytes_of(key_of(r.a, r.b, r.c_offsets)), std::move(work));
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
  if (empty_product(r.a, r.b)) {
    ACCEL_RETURN_IF_ERROR(check_factors(run, r.kName, r.a, r.b, views));
    ACCEL_RETURN_IF_ERROR(sparse::check_output_nnz(r.kName, "c", r.c.nnz, 0, SpGemmCount::kName));
    return zero_offsets(run, r.a, views);
  }
  const sparse::SpGemmKey key = key_of(r.a, r.b, r.c.offsets);
  void* const columns = views[Op::c_indices].data;
  std::shared_ptr<const SpGemmWork> work;
  if (fixed(r.a, r.b)) work = plan.state->products().peek(bytes_of(key));
  // A state whose copy step filled other columns is not reused: its copy step is not run twice.
  if (work == nullptr || (work->filled != nullptr && work->filled != columns)) {
    ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<SpGemmWork> counted, count(r.kName, r.a, r.b, views, plan, run));
    work = counted;
    if (fixed(r.a, r.b)) plan.state->products().put(bytes_of(key), std::move(counted));
  }
  ACCEL_RETURN_IF_ERROR(sparse::check_output_nnz(r.kName, "c", r.c.nnz, work->nnz, SpGemmCount::kName));
  if (work->nnz == 0) return Status();
  ACCEL_RETURN_IF_ERROR(
      sparse::cusparse_status(cusparseSpMatSetValues(work->a, views[Op::a_values].data), "cusparseSpMatSetValues"));
  ACCEL_RETURN_IF_ERROR(
      sparse::cusparse_status(cusparseSpMatSetValues(work->b, views[Op::b_values].data), "cusparseSpMatSetValues"));
  ACCEL_RETURN_IF_ERROR(sparse::cusparse_status(
      cusparseCsrSetPointers(work->c, views[Op::c_offsets].data, columns, views[Op::c_values].data),
      "cusparseCsrSetPointers"));
  const cusparseHandle_t handle = plan.state->handle();
  if (work->filled == nullptr) {
    std::size_t size5 = 0;
    auto copy = [&](void* buffer) {
      return sparse::launched(run,
                              cusparseSpGEMMreuse_copy(handle, kNone, kNone, work->a, work->b, work->c, kAlgorithm,
                                                       work->spgemm, &size5, buffer),
                              "cusparseSpGEMMreuse_copy");
    };
    ACCEL_RETURN_IF_ERROR(copy(nullptr));
    if (work->copy_buffer == nullptr) ACCEL_RETURN_IF_ERROR(allocate(run, work->copy_buffer, size5));
    ACCEL_RETURN_IF_ERROR(copy(work->copy_buffer));
    work->filled = columns;
  }
  const sparse::Scalars s(r.a.dtype, r.alpha, 0.0);
  return sparse::launched(
      run,
      cusparseSpGEMMreuse_compute(handle, kNone, kNone, s.alpha(), work->a, work->b, s.beta(), work->c,
                                  sparse::compute_type(r.a.dtype), kAlgorithm, work->spgemm),
      "cusparseSpGEMMreuse_compute");
}

}  // namespace accel

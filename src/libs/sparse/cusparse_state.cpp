#include "libs/sparse/cusparse_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "libs/sparse/structure_kernel.hpp"

namespace accel::sparse {
namespace {

// An analysis holds a descriptor and a buffer of a few bytes per row; this bounds a stream's cache against a
// stream of ever new matrices.
constexpr std::size_t kAnalysisCapacity = 256;

cusparseIndexType_t to_index(DType index) noexcept {
  return index == DType::i64 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
}

}  // namespace

Status cusparse_status(cusparseStatus_t status, std::string_view what) {
  if (status == CUSPARSE_STATUS_SUCCESS) return Status();
  // A status comes from a call through the table, so the library is loaded and can name it.
  const CusparseApi* api = loaded_cusparse_api();
  const std::string message =
      fmt::format("{}: {} ({})", what, api != nullptr ? api->cusparseGetErrorName(status) : "cusparseStatus_t",
                  static_cast<int>(status));
  switch (status) {
    case CUSPARSE_STATUS_ALLOC_FAILED:
    case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES:
      return Status(Code::resource_exhausted, message, Source::cusparse, status);
    case CUSPARSE_STATUS_INVALID_VALUE: return Status(Code::invalid_argument, message, Source::cusparse, status);
    case CUSPARSE_STATUS_ARCH_MISMATCH:
    case CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
    case CUSPARSE_STATUS_NOT_SUPPORTED: return Status(Code::not_supported, message, Source::cusparse, status);
    case CUSPARSE_STATUS_NOT_INITIALIZED: return Status(Code::unavailable, message, Source::cusparse, status);
    default: return Status(Code::internal, message, Source::cusparse, status);
  }
}

cudaDataType to_cuda(DType dtype) noexcept {
  switch (dtype) {
    case DType::f64: return CUDA_R_64F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

cudaDataType compute_type(DType dtype) noexcept { return dtype == DType::f64 ? CUDA_R_64F : CUDA_R_32F; }

Analysis::~Analysis() {
  if (spsv != nullptr) api.cusparseSpSV_destroyDescr(spsv);
  if (matrix != nullptr) api.cusparseDestroySpMat(matrix);
  if (buffer != nullptr) cudaFreeAsync(buffer, stream);
}

StreamBuffer::~StreamBuffer() {
  if (data_ != nullptr) cudaFreeAsync(data_, stream_);
}

Status StreamBuffer::allocate(CudaTarget& target, std::size_t bytes, std::string_view what) {
  if (bytes == 0) return Status();
  return target.check(cudaMallocFromPoolAsync(&data_, bytes, target.pool(), stream_),
                      fmt::format("allocating {}", what));
}

SpGemmWork::~SpGemmWork() {
  if (spgemm != nullptr) api.cusparseSpGEMM_destroyDescr(spgemm);
  for (cusparseSpMatDescr_t m : {a, b, c})
    if (m != nullptr) api.cusparseDestroySpMat(m);
}

std::optional<CountedKey> counted_key(const Matrix& a, const Matrix& b, std::span<const BufferView> views,
                                      std::uint64_t offsets_version) {
  if (offsets_version == 0) return std::nullopt;
  CountedKey key{};
  auto types = [](const Matrix& m) {
    return static_cast<std::int64_t>(m.format) | static_cast<std::int64_t>(m.index) << 8 |
           static_cast<std::int64_t>(m.dtype) << 16;
  };
  std::size_t at = 0;
  for (const Matrix* m : {&a, &b}) {
    key[at++] = types(*m);
    key[at++] = m->rows;
    key[at++] = m->cols;
    key[at++] = m->nnz;
  }
  for (std::size_t i = 0; i < 6; ++i) {
    if (views[i].version == 0) return std::nullopt;
    key[at++] = static_cast<std::int64_t>(views[i].version);
  }
  key[at] = static_cast<std::int64_t>(offsets_version);
  return key;
}

AnalysisKey analysis_key(Kind kind, const Matrix& m, std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d,
                         std::int64_t e) {
  const std::int64_t kinds = static_cast<std::int64_t>(kind) | static_cast<std::int64_t>(m.format) << 8 |
                             static_cast<std::int64_t>(m.index) << 16 | static_cast<std::int64_t>(m.dtype) << 24;
  AnalysisKey key{kinds, m.rows, m.cols, m.nnz};
  const IndexArrays arrays = index_arrays(m);
  std::copy(arrays.begin(), arrays.end(), key.begin() + 4);
  const std::array<std::int64_t, 6> rest{a, b, c, d, e, m.ell_block_size};
  std::copy(rest.begin(), rest.end(), key.begin() + 10);
  return key;
}

CusparseState::CusparseState(const CusparseApi& api, cusparseHandle_t handle)
    : api_(api),
      handle_(handle),
      analyses_(std::make_unique<cache::Cache<Analysis>>(
          cache::CacheOptions<Analysis>{.name = "cusparse-analyses", .max_entries = kAnalysisCapacity})),
      counted_(std::make_unique<cache::Cache<CountedProduct>>(cache::CacheOptions<CountedProduct>{
          .name = "cusparse-spgemm-counts", .max_entries = 1, .size_of = [](const CountedProduct& product) {
            return product.bytes;
          }})) {}

CusparseState::~CusparseState() {
  analyses_.reset();
  api_.cusparseDestroy(handle_);
}

Result<std::unique_ptr<CusparseState>> CusparseState::open(CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(const CusparseApi* api, cusparse_api());
  cusparseHandle_t handle = nullptr;
  ACCEL_RETURN_IF_ERROR(cusparse_status(api->cusparseCreate(&handle), "cusparseCreate"));
  if (Status bound = cusparse_status(api->cusparseSetStream(handle, target.stream()), "cusparseSetStream");
      !bound.ok()) {
    api->cusparseDestroy(handle);
    return bound;
  }
  return std::unique_ptr<CusparseState>(new CusparseState(*api, handle));
}

Result<SparsePlan> plan_sparse(CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(SparsePlan plan, plan_structure_checks(target));
  ACCEL_ASSIGN_OR_RETURN(plan.state, target.stream_state<CusparseState>());
  plan.api = &plan.state->api();
  return plan;
}

Result<SparsePlan> plan_structure_checks(CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(StructureVerdicts * verdicts, target.stream_state<StructureVerdicts>());
  return SparsePlan{.verdicts = verdicts};
}

Result<PassedStructure> check_structure_on_device(CudaRun& run, std::string_view request, std::string_view name,
                                                  const Matrix& m, const BufferView& offsets,
                                                  const BufferView& indices) {
  if (run.workspace_bytes < kReportBytes || run.host_result.size() < kReportBytes) {
    return internal_error("check_structure_on_device: the plan holds no room for the structure's report");
  }
  const StructureShape shape = structure_shape(m);
  const KernelShape kernel{.coo = shape.format == Format::coo,
                           .blocked_ell = shape.format == Format::blocked_ell,
                           .wide = m.index == DType::i64,
                           .outer = shape.outer,
                           .inner = shape.inner,
                           .nnz = shape.nnz};
  auto* device = static_cast<StructureReport*>(run.workspace);
  cudaStream_t stream = run.target.stream();
  ACCEL_RETURN_IF_ERROR(run.target.check(launch_structure_check(kernel, offsets.data, indices.data, device, stream),
                                         "the structure check"));
  ACCEL_RETURN_IF_ERROR(
      run.target.check(cudaMemcpyAsync(run.host_result.data(), device, kReportBytes, cudaMemcpyDeviceToHost, stream),
                       "copying the structure check's report"));
  // The verdict must be known before cuSPARSE launches: the one wait of a checked request.
  ACCEL_RETURN_IF_ERROR(run.target.check(cudaStreamSynchronize(stream), "waiting for the structure check"));
  StructureReport report;
  std::memcpy(&report, run.host_result.data(), kReportBytes);
  ACCEL_RETURN_IF_ERROR(structure_status(request, name, shape, report));
  return PassedStructure{.longest = report.longest};
}

Result<cusparseSpMatDescr_t> make_descriptor(const CusparseApi& api, const Matrix& m, const BufferView& offsets,
                                             const BufferView& indices, const BufferView& values) {
  cusparseSpMatDescr_t descriptor = nullptr;
  const cusparseIndexType_t index = to_index(m.index);
  const cudaDataType type = to_cuda(m.dtype);
  cusparseStatus_t status = CUSPARSE_STATUS_SUCCESS;
  switch (m.format) {
    case Format::csr:
      status = api.cusparseCreateCsr(&descriptor, m.rows, m.cols, m.nnz, offsets.data, indices.data, values.data, index,
                                     index, CUSPARSE_INDEX_BASE_ZERO, type);
      break;
    case Format::csc:
      status = api.cusparseCreateCsc(&descriptor, m.rows, m.cols, m.nnz, offsets.data, indices.data, values.data, index,
                                     index, CUSPARSE_INDEX_BASE_ZERO, type);
      break;
    case Format::coo:
      status = api.cusparseCreateCoo(&descriptor, m.rows, m.cols, m.nnz, offsets.data, indices.data, values.data, index,
                                     CUSPARSE_INDEX_BASE_ZERO, type);
      break;
    case Format::blocked_ell:
      status = api.cusparseCreateBlockedEll(&descriptor, m.rows, m.cols, m.ell_block_size, ell_cols(m), indices.data,
                                            values.data, index, CUSPARSE_INDEX_BASE_ZERO, type);
      break;
  }
  ACCEL_RETURN_IF_ERROR(cusparse_status(status, "creating the sparse matrix's descriptor"));
  return descriptor;
}

Status allocate_buffer(CudaRun& run, Analysis& analysis, std::size_t bytes) {
  analysis.stream = run.target.stream();
  analysis.buffer_bytes = bytes;
  if (bytes == 0) return Status();
  return run.target.check(cudaMallocFromPoolAsync(&analysis.buffer, bytes, run.target.pool(), analysis.stream),
                          "allocating cuSPARSE's buffer");
}

Status launched(CudaRun& run, cusparseStatus_t status, std::string_view what) {
  return launch_status(run.target, cusparse_status(status, what), "cuSPARSE");
}

void describe_cusparse(CudaTarget& target, LibraryReport& report) {
  report.report(cusparse_library());
  if (CusparseState* state = target.existing_stream_state<CusparseState>()) {
    report.report(state->analyses().stats());
    report.report(state->counted_products().stats());
    report.report(state->handovers());
  }
  describe_structure_verdicts(target, report);
}

}  // namespace accel::sparse

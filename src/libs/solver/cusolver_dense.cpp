#include "libs/solver/cusolver_dense.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace accel::solver {
namespace {

// Workspace sizes are a few bytes each; this bounds a stream's cache against a stream of ever new shapes.
constexpr std::size_t kWorkSizeCapacity = 4096;
constexpr std::uint64_t kAlignment = 256;  // of what follows the work area in the workspace

std::string_view status_name(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default: return "cusolverStatus_t";
  }
}

using KeyBytes = std::array<std::int64_t, 8>;

KeyBytes key_bytes(const WorkKey& key) {
  const std::int64_t kinds = static_cast<std::int64_t>(key.routine) | static_cast<std::int64_t>(key.dtype) << 8 |
                             static_cast<std::int64_t>(key.fill) << 16 | static_cast<std::int64_t>(key.job) << 24;
  return {kinds, key.m, key.n, key.k, key.lda, key.ldu, key.ldv, key.batch};
}

}  // namespace

Status cusolver_status(cusolverStatus_t status, std::string_view what) {
  if (status == CUSOLVER_STATUS_SUCCESS) return Status();
  const std::string message = fmt::format("{}: {} ({})", what, status_name(status), static_cast<int>(status));
  switch (status) {
    case CUSOLVER_STATUS_ALLOC_FAILED: return Status(Code::resource_exhausted, message, Source::cusolver, status);
    case CUSOLVER_STATUS_INVALID_VALUE: return Status(Code::invalid_argument, message, Source::cusolver, status);
    case CUSOLVER_STATUS_ARCH_MISMATCH:
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
    case CUSOLVER_STATUS_NOT_SUPPORTED: return Status(Code::not_supported, message, Source::cusolver, status);
    case CUSOLVER_STATUS_NOT_INITIALIZED: return Status(Code::unavailable, message, Source::cusolver, status);
    default: return Status(Code::internal, message, Source::cusolver, status);
  }
}

CusolverState::~CusolverState() { api_.cusolverDnDestroy(handle_); }

Result<std::unique_ptr<CusolverState>> CusolverState::open(CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(const CusolverApi* api, cusolver_api());
  cusolverDnHandle_t handle = nullptr;
  ACCEL_RETURN_IF_ERROR(cusolver_status(api->cusolverDnCreate(&handle), "cusolverDnCreate"));
  if (Status bound = cusolver_status(api->cusolverDnSetStream(handle, target.stream()), "cusolverDnSetStream");
      !bound.ok()) {
    api->cusolverDnDestroy(handle);
    return bound;
  }
  return std::unique_ptr<CusolverState>(new CusolverState(*api, handle));
}

WorkSizes::WorkSizes()
    : sizes_(cache::CacheOptions<std::int64_t>{.name = "cusolver-workspace-sizes", .max_entries = kWorkSizeCapacity}) {}

Result<std::unique_ptr<WorkSizes>> WorkSizes::open(CudaTarget&) { return std::unique_ptr<WorkSizes>(new WorkSizes()); }

Result<std::int64_t> WorkSizes::elements(const WorkKey& key, const CusolverState& state, const WorkQuery& query) {
  const KeyBytes bytes = key_bytes(key);
  const std::span<const std::byte> span(reinterpret_cast<const std::byte*>(bytes.data()), sizeof bytes);
  ACCEL_ASSIGN_OR_RETURN(
      std::shared_ptr<const std::int64_t> size, sizes_.get(span, [&]() -> Result<std::shared_ptr<const std::int64_t>> {
        int lwork = 0;
        ACCEL_RETURN_IF_ERROR(cusolver_status(query(state.api(), state.handle(), &lwork), "cuSOLVER's workspace size"));
        if (lwork < 0) return internal_error(fmt::format("cuSOLVER asked for {} elements", lwork));
        return std::make_shared<const std::int64_t>(lwork);
      }));
  return *size;
}

Result<DensePlan> plan_dense(CudaTarget& target, const WorkKey& key, std::int64_t batch, bool empty,
                             const WorkQuery& query, DenseNeeds needs) {
  ACCEL_ASSIGN_OR_RETURN(CusolverState * state, target.stream_state<CusolverState>());
  DensePlan plan{.api = &state->api(), .handle = state->handle(), .batch = batch, .empty = empty};
  if (empty) return plan;
  if (query) {
    ACCEL_ASSIGN_OR_RETURN(WorkSizes * sizes, target.context_state<WorkSizes>());
    ACCEL_ASSIGN_OR_RETURN(plan.lwork, sizes->elements(key, *state, query));
  }
  auto aligned = [](std::uint64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; };
  plan.work_bytes = aligned(static_cast<std::uint64_t>(plan.lwork + needs.extra) * size_of(key.dtype));
  if (needs.infos_in_workspace) plan.info_bytes = aligned(plan.infos_bytes());
  plan.host_bytes = plan.infos_bytes();
  if (needs.pointer_array) {
    plan.pointer_bytes = static_cast<std::uint64_t>(batch) * sizeof(void*);
    plan.host_bytes = plan.host_pointers_offset() + plan.pointer_bytes;
  }
  // The check's report is read on the host before the routine runs, so it shares the host result with the infos.
  plan.check_bytes = aligned(needs.check_bytes);
  plan.host_bytes = std::max(plan.host_bytes, needs.check_bytes);
  return plan;
}

std::int32_t* run_infos(const DensePlan& plan, const CudaRun& run, void* info_buffer) noexcept {
  if (plan.info_bytes == 0) return static_cast<std::int32_t*>(info_buffer);
  return reinterpret_cast<std::int32_t*>(static_cast<std::byte*>(run.workspace) + plan.work_bytes);
}

Result<void**> batch_pointers(const DensePlan& plan, CudaRun& run, void* base, std::uint64_t stride_bytes) {
  if (plan.pointer_bytes == 0 || run.host_result.size() < plan.host_pointers_offset() + plan.pointer_bytes) {
    return internal_error("batch_pointers: the plan holds no room for the matrices' addresses");
  }
  std::byte* host = run.host_result.data() + plan.host_pointers_offset();
  for (std::int64_t i = 0; i < plan.batch; ++i) {
    void* address = static_cast<std::byte*>(base) + static_cast<std::uint64_t>(i) * stride_bytes;
    std::memcpy(host + i * sizeof(void*), &address, sizeof(void*));
  }
  void* device = static_cast<std::byte*>(run.workspace) + plan.work_bytes + plan.info_bytes;
  ACCEL_RETURN_IF_ERROR(
      run.target.check(cudaMemcpyAsync(device, host, plan.pointer_bytes, cudaMemcpyHostToDevice, run.target.stream()),
                       "copying the batch's matrix addresses to the device"));
  return static_cast<void**>(device);
}

Status finish_with_infos(const DensePlan& plan, CudaRun& run, Routine routine, std::int32_t* infos) {
  const std::uint64_t bytes = plan.infos_bytes();
  if (plan.empty) {
    if (infos == nullptr) return Status();
    return run.target.check(cudaMemsetAsync(infos, 0, bytes, run.target.stream()), "zeroing the infos");
  }
  if (run.host_result.size() < bytes) {
    return internal_error(fmt::format("the run has {} bytes for {} infos", run.host_result.size(), plan.batch));
  }
  ACCEL_RETURN_IF_ERROR(run.target.check(
      cudaMemcpyAsync(run.host_result.data(), infos, bytes, cudaMemcpyDeviceToHost, run.target.stream()),
      "copying cuSOLVER's infos to the host"));
  run.check_result = [routine, bytes](std::span<const std::byte> host) {
    return batch_status(routine, host.first(bytes), Source::cusolver);
  };
  return Status();
}

Status launched(CudaRun& run, cusolverStatus_t status, std::string_view what) {
  return launch_status(run.target, cusolver_status(status, what), "cuSOLVER");
}

void describe_cusolver(CudaTarget& target, LibraryReport& report) {
  report.report(cusolver_library());
  if (WorkSizes* sizes = target.existing_context_state<WorkSizes>()) report.report(sizes->stats());
}

}  // namespace accel::solver

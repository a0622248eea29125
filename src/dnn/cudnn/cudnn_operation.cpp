#include "dnn/cudnn/cudnn_operation.hpp"

#include <fmt/format.h>

namespace accel::dnn::cudnn {

Result<std::unique_ptr<CudnnPlans>> CudnnPlans::open(CudaTarget& target) {
  const dnn::Options& options = target.dnn_options();
  return std::make_unique<CudnnPlans>(DnnPlanOptions{.capacity = options.plan_cache_capacity,
                                                     .persistent = options.persistent_plans,
                                                     .directory = options.plan_directory,
                                                     .directory_bytes = options.plan_directory_bytes,
                                                     .compute_capability = target.compute_capability(),
                                                     .device_name = std::string(target.gpu_name())});
}

Result<std::unique_ptr<CudnnHandle>> CudnnHandle::open(CudaTarget& target) {
  cudnnHandle_t handle = nullptr;
  if (cudnnStatus_t status = cudnnCreate(&handle); status != CUDNN_STATUS_SUCCESS) {
    return Status(Code::unavailable, fmt::format("cudnnCreate: {}", cudnnGetErrorString(status)), Source::cudnn,
                  status);
  }
  if (cudnnStatus_t status = cudnnSetStream(handle, target.stream()); status != CUDNN_STATUS_SUCCESS) {
    cudnnDestroy(handle);
    return Status(Code::internal, fmt::format("cudnnSetStream: {}", cudnnGetErrorString(status)), Source::cudnn,
                  status);
  }
  return std::make_unique<CudnnHandle>(handle);
}

CudnnHandle::~CudnnHandle() { cudnnDestroy(handle_); }

Result<CudnnGraphOperation::Plan> CudnnGraphOperation::plan(const CheckedGraph& checked, CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(CudnnPlans * plans, target.context_state<CudnnPlans>());
  ACCEL_ASSIGN_OR_RETURN(CudnnHandle * handle, target.stream_state<CudnnHandle>());
  ACCEL_ASSIGN_OR_RETURN(
      std::shared_ptr<const PlannedGraph> planned,
      plans->plans().find_or_build(checked.key, handle->get(),
                                   [&]() -> Result<std::shared_ptr<const Graph>> { return checked.graph; }));
  return Plan{.handle = handle->get(), .planned = std::move(planned)};
}

std::uint64_t CudnnGraphOperation::workspace_bytes(const Plan& plan) {
  return static_cast<std::uint64_t>(cudnn::workspace_bytes(*plan.planned->plan));
}

Status CudnnGraphOperation::run(const CheckedGraph& checked, const Plan& plan, std::span<const BufferView> views,
                                CudaRun& run) {
  std::vector<std::pair<std::uint32_t, void*>> addresses;
  addresses.reserve(views.size());
  for (std::size_t i = 0; i < views.size(); ++i) addresses.emplace_back(checked.bindings[i].uid, views[i].data);
  return launch_status(run.target, execute(*plan.planned->plan, plan.handle, addresses, run.workspace), "cuDNN");
}

void CudnnGraphOperation::describe(CudaTarget& target, LibraryReport& report) {
  for (LibraryVersion& library : cudnn_libraries()) report.report(std::move(library));
  if (CudnnPlans* plans = target.existing_context_state<CudnnPlans>()) report.report(plans->plans().stats());
}

}  // namespace accel::dnn::cudnn

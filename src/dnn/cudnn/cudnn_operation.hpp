// The cuDNN family on a CUDA stream: the device context's plan cache (DnnPlans, shared by its streams) and each
// stream's cuDNN handle are family state (CudaTarget::context_state / stream_state).
#pragma once

#include <cudnn.h>

#include <memory>

#include "dnn/cudnn/dnn_plans.hpp"
#include "dnn/graph_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

namespace dnn::cudnn {

class CudnnPlans final : public TargetState {
 public:
  static Result<std::unique_ptr<CudnnPlans>> open(CudaTarget& target);
  explicit CudnnPlans(DnnPlanOptions options) : plans_(std::move(options)) {}
  [[nodiscard]] DnnPlans& plans() noexcept { return plans_; }
  [[nodiscard]] const DnnPlans& plans() const noexcept { return plans_; }

 private:
  DnnPlans plans_;
};

class CudnnHandle final : public TargetState {
 public:
  static Result<std::unique_ptr<CudnnHandle>> open(CudaTarget& target);
  explicit CudnnHandle(cudnnHandle_t handle) : handle_(handle) {}
  ~CudnnHandle() override;
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;
  [[nodiscard]] cudnnHandle_t get() const noexcept { return handle_; }

 private:
  cudnnHandle_t handle_;
};

struct CudnnGraphOperation {
  // The stream's cuDNN handle and the plan of the graph, found once.
  struct Plan {
    cudnnHandle_t handle = nullptr;
    std::shared_ptr<const PlannedGraph> planned;
  };
  static Result<Plan> plan(const CheckedGraph& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan);
  static Status run(const CheckedGraph& checked, const Plan& plan, std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report);
};

template <class Request>
struct CudnnOperation : CudnnGraphOperation {
  static Result<Plan> plan(const Request&, const CheckedGraph& checked, CudaTarget& target) {
    return CudnnGraphOperation::plan(checked, target);
  }
  static Status run(const Request&, const CheckedGraph& checked, const Plan& plan, std::span<const BufferView> views,
                    CudaRun& run) {
    return CudnnGraphOperation::run(checked, plan, views, run);
  }
};

}  // namespace dnn::cudnn

template <>
struct CudaOperation<ConvFwd> : dnn::cudnn::CudnnOperation<ConvFwd> {};
template <>
struct CudaOperation<ConvBwdData> : dnn::cudnn::CudnnOperation<ConvBwdData> {};
template <>
struct CudaOperation<ConvBwdFilter> : dnn::cudnn::CudnnOperation<ConvBwdFilter> {};
template <>
struct CudaOperation<RunGraph> : dnn::cudnn::CudnnOperation<RunGraph> {};

}  // namespace accel

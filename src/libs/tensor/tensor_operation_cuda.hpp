// The CUDA halves of the tensor family's operation contracts (cuda_operation.hpp): a cached cuTENSOR plan per
// request description (cutensor_plans.hpp), its workspace from the stream's, and one cuTENSOR call per run.
#pragma once

#include <span>

#include "libs/tensor/cutensor_plans.hpp"
#include "libs/tensor/tensor_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

// The part every tensor request's CUDA half shares.
template <class Request>
struct TensorCudaOperation {
  using Plan = tensor::TensorPlan;
  using Checked = tensor::Counts;

  static Result<Plan> plan(const Request& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes; }
  static Status run(const Request& request, const Checked& checked, const Plan& plan, std::span<const BufferView> views,
                    CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { tensor::describe_cutensor(target, report); }
};

template <>
struct CudaOperation<tensor::Contract> : TensorCudaOperation<tensor::Contract> {};
template <>
struct CudaOperation<tensor::ElementwiseBinary> : TensorCudaOperation<tensor::ElementwiseBinary> {};
template <>
struct CudaOperation<tensor::ElementwiseTrinary> : TensorCudaOperation<tensor::ElementwiseTrinary> {};
template <>
struct CudaOperation<tensor::Reduce> : TensorCudaOperation<tensor::Reduce> {};
template <>
struct CudaOperation<tensor::Permute> : TensorCudaOperation<tensor::Permute> {};

}  // namespace accel

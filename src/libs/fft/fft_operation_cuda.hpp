// Fft on a CUDA stream: cuFFT, with the stream's plan cache (CufftPlans), its work area from the stream's
// workspace, and the normalisation as a kernel after the transform (fft_scale.hpp).
#pragma once

#include <memory>

#include "libs/fft/cufft_plans.hpp"
#include "libs/fft/fft_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<Fft> {
  struct Plan {
    std::shared_ptr<const fft::CufftPlan> plan;
  };

  // Refuses operands whose handles do not fit the geometry before it makes (or finds) the cuFFT plan.
  static Result<Plan> plan(const Fft& request, const FftGeometry& geometry, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.plan->work_bytes(); }
  static Status run(const Fft& request, const FftGeometry& geometry, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report);
};

}  // namespace accel

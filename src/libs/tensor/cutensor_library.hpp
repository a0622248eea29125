// cuTENSOR's library, loaded at run time rather than linked: libcutensor.so.2 is 323 MB and the GPU test machine
// lacks it (scripts/gpu-send-cutensor sends it there), so binaries must start without it and the family answer
// `unavailable` where it cannot be found. The entry points are resolved once per process and never unloaded.
#pragma once

#include <cutensor.h>

#include <string_view>

#include "accel/core/library_version.hpp"
#include "accel/core/result.hpp"

namespace accel::tensor {

// The entry points the tensor family calls, and the compute descriptors cuTENSOR exports as variables.
struct CutensorApi {
// clang-format off
#define ACCEL_CUTENSOR_FUNCTIONS(X) \
  X(cutensorCreate) \
  X(cutensorDestroy) \
  X(cutensorCreateTensorDescriptor) \
  X(cutensorDestroyTensorDescriptor) \
  X(cutensorCreateContraction) \
  X(cutensorCreateElementwiseBinary) \
  X(cutensorCreateElementwiseTrinary) \
  X(cutensorCreateReduction) \
  X(cutensorCreatePermutation) \
  X(cutensorDestroyOperationDescriptor) \
  X(cutensorOperationDescriptorGetAttribute) \
  X(cutensorCreatePlanPreference) \
  X(cutensorDestroyPlanPreference) \
  X(cutensorPlanPreferenceSetAttribute) \
  X(cutensorEstimateWorkspaceSize) \
  X(cutensorCreatePlan) \
  X(cutensorDestroyPlan) \
  X(cutensorPlanGetAttribute) \
  X(cutensorContract) \
  X(cutensorElementwiseBinaryExecute) \
  X(cutensorElementwiseTrinaryExecute) \
  X(cutensorReduce) \
  X(cutensorPermute) \
  X(cutensorGetErrorString) \
  X(cutensorGetVersion)
// clang-format on
#define ACCEL_CUTENSOR_MEMBER(name) decltype(&::name) name = nullptr;
  ACCEL_CUTENSOR_FUNCTIONS(ACCEL_CUTENSOR_MEMBER)
#undef ACCEL_CUTENSOR_MEMBER

  cutensorComputeDescriptor_t compute_16f = nullptr;
  cutensorComputeDescriptor_t compute_16bf = nullptr;
  cutensorComputeDescriptor_t compute_tf32 = nullptr;
  cutensorComputeDescriptor_t compute_3xtf32 = nullptr;
  cutensorComputeDescriptor_t compute_32f = nullptr;
  cutensorComputeDescriptor_t compute_64f = nullptr;
};

// The library, loaded the first time: the file ACCEL_CUTENSOR_LIBRARY names if set, else libcutensor.so.2 where the
// dynamic loader finds it (LD_LIBRARY_PATH), else the copy this build was configured with. unavailable, naming
// what was tried, where none loads; the answer is kept for the process.
[[nodiscard]] Result<const CutensorApi*> cutensor_api();

// A cuTENSOR status as ours.
[[nodiscard]] Status cutensor_status(const CutensorApi& api, cutensorStatus_t status, std::string_view what);

// {"cuTENSOR", "2.8.1"}, of the library loaded.
[[nodiscard]] LibraryVersion cutensor_library(const CutensorApi& api);

}  // namespace accel::tensor

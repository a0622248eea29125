// The tensor family's CUDA half in a build without cuTENSOR (scripts/setup puts it under .deps/): every request is
// answered not_supported, before anything runs.
#include "libs/tensor/cutensor_plans.hpp"

namespace accel::tensor {

class CutensorPlan {};

Result<TensorPlan> plan_cutensor(CudaTarget&, const PlanSpec&) {
  return not_supported(
      "the tensor requests run on CUDA through cuTENSOR, which this build does not include "
      "(scripts/setup fetches it; then reconfigure)");
}

Status run_cutensor(const TensorPlan&, const RunArgs&, CudaRun&) {
  return internal_error("run_cutensor: this build has no cuTENSOR, so no plan can exist");
}

void describe_cutensor(CudaTarget&, LibraryReport&) {}

}  // namespace accel::tensor

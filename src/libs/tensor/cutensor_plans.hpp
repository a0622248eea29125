// cuTENSOR plans for the tensor requests on a CUDA stream, as tensor_operation_cuda.cpp uses them: this header does
// not include cuTENSOR's, so that the family's CUDA half builds where cuTENSOR is absent. With it, cutensor_plans.cpp
// implements it (the library loaded at run time, cutensor_library.hpp); without it, cutensor_absent.cpp answers
// not_supported.
//
// Plans are cached through the one cache (cache/cache.hpp), per CUDA context, keyed by the full PlanSpec: the
// operation, dtype, compute type, operators and every tensor's modes and extents. cuTENSOR's own plan cache (per
// handle, keyed by its operation descriptors) is switched off for these plans (CUTENSOR_CACHE_MODE_NONE): ours keeps
// the cutensorPlan_t itself, so a repeated request makes neither descriptors nor a plan, and a second cache under it
// would only hold copies of the same kernel choices and hide what the cache statistics report.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "accel/libs/tensor/tensor.hpp"
#include "libs/tensor/tensor_checks.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::tensor {

class CutensorPlan;  // cuTENSOR's plan and the descriptors it was made of (cutensor_plans.cpp)

// What a plan depends on; never the buffers or the scalars, which each run passes.
struct PlanSpec {
  Kind kind = Kind::contract;
  DType dtype = DType::f32;
  Compute compute = Compute::standard;                                            // resolved
  std::array<Unary, 3> unary{Unary::identity, Unary::identity, Unary::identity};  // of A, B, C
  std::array<Binary, 2> binary{Binary::add, Binary::add};  // op (op_ab), op_abc; a reduction's is the first
  // A, B (rank 0 where the operation has none) and the output (D, or a permutation's B); buffers left null.
  std::array<Tensor, 3> tensors{};
};

// A plan and the workspace its runs take (from the stream's workspace, in the device's pool).
struct TensorPlan {
  std::shared_ptr<const CutensorPlan> plan;
  std::uint64_t workspace_bytes = 0;
};

// The scalars and addresses of one run; C is D's address for a request that reads D in place, B null where the
// operation has none.
struct RunArgs {
  double alpha = 1.0;
  double beta = 0.0;
  double gamma = 0.0;
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  void* d = nullptr;
};

// The cached plan of `spec` on this stream's context (made the first time); not_supported where cuTENSOR was not
// built in or takes no such operation, unavailable where its library cannot be loaded.
[[nodiscard]] Result<TensorPlan> plan_cutensor(CudaTarget& target, const PlanSpec& spec);
// Enqueues the plan's operation on the run's stream.
[[nodiscard]] Status run_cutensor(const TensorPlan& plan, const RunArgs& args, CudaRun& run);
// cuTENSOR's version and the plan cache's statistics, where the library is loaded.
void describe_cutensor(CudaTarget& target, LibraryReport& report);

}  // namespace accel::tensor

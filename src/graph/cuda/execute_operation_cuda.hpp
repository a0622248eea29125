// graph::Execute on a CUDA stream (cuda_executable.hpp): plan() finds or compiles the executable of the request's
// bucket in the stream's cache; run() copies in, replays (or launches op by op at the actual extent), copies out.
#pragma once

#include <memory>

#include "graph/cuda/cuda_executable.hpp"
#include "graph/execute_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<graph::Execute> {
  struct Plan {
    std::shared_ptr<const graph::cuda::CudaExecutable> executable;
    blas::CublasLtGemm* gemm = nullptr;  // null: the graph kernels' own matmul (cuBLASLt still starting)
    bool replay = true;
  };

  static Result<Plan> plan(const graph::Execute& request, const graph::CheckedExecute& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }  // the executable's arena is its own
  static Status run(const graph::Execute& request, const graph::CheckedExecute& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report);
};

}  // namespace accel

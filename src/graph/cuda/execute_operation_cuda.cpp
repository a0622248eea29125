#include "graph/cuda/execute_operation_cuda.hpp"

#include "libs/blas/gemm_operation_cuda.hpp"

namespace accel {

Result<CudaOperation<graph::Execute>::Plan> CudaOperation<graph::Execute>::plan(const graph::Execute& request,
                                                                                const graph::CheckedExecute& checked,
                                                                                CudaTarget& target) {
  ACCEL_ASSIGN_OR_RETURN(graph::cuda::GraphStreamState * state, target.stream_state<graph::cuda::GraphStreamState>());
  ACCEL_ASSIGN_OR_RETURN(blas::CublasLtState * blas, target.stream_state<blas::CublasLtState>());
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const graph::cuda::CudaExecutable> executable, state->executable(checked));
  // Until cuBLASLt's start-up is over (its first call costs 100–130 ms), matmuls take the graph kernels' own. While
  // it runs, on its thread, a run is direct rather than captured: what the start-up does on the device may invalidate
  // a capture in progress here (a 12 x 768 encoder's load failed so about one time in three on the H200,
  // docs/PERFORMANCE.md §66), and a graph captured without cuBLASLt is captured again once cuBLASLt is ready anyway.
  blas::CublasLtGemm* gemm = blas->gemm_if_ready();
  const bool replay = graph::replays(request, checked, gemm == nullptr && blas::CublasLtState::starting());
  return Plan{.executable = std::move(executable), .gemm = gemm, .replay = replay};
}

Status CudaOperation<graph::Execute>::run(const graph::Execute&, const graph::CheckedExecute& checked, const Plan& plan,
                                          std::span<const BufferView> views, CudaRun& run) {
  return plan.executable->run(checked, views, plan.replay, plan.gemm, run.target);
}

void CudaOperation<graph::Execute>::describe(CudaTarget& target, LibraryReport& report) {
  if (auto* state = target.existing_stream_state<graph::cuda::GraphStreamState>()) report.report(state->stats());
}

}  // namespace accel

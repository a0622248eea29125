// Executables on one CUDA stream: a specialised plan with its arena (from the device's pool), its inputs copied
// in and padded to the bucket on the device, and its run either replayed as one captured CUDA graph (every op at
// the bucket's extent) or launched op by op at the actual extent. Cached per stream (an arena and a captured
// graph belong to the stream that runs them) in an LRU by entries and arena bytes, with the plans on disk.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <span>

#include "cache/cache.hpp"
#include "graph/executable_plan.hpp"
#include "graph/execute_operation.hpp"
#include "libs/blas/cublaslt_gemm.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::graph::cuda {

// Enqueues the plan's steps at the extents of `extent`: matmuls through cuBLASLt, or through the graph kernels' own
// matmul where `gemm` is null (cuBLASLt still starting); the rest the graph kernels.
[[nodiscard]] Status enqueue_steps(const ExecutablePlan& plan, const SymbolValues& extent, std::byte* arena,
                                   const std::byte* weights, blas::CublasLtGemm* gemm, CudaTarget& target);

class CudaExecutable {
 public:
  static Result<std::shared_ptr<const CudaExecutable>> make(ExecutablePlan plan, CudaTarget& target);
  ~CudaExecutable();
  CudaExecutable(const CudaExecutable&) = delete;
  CudaExecutable& operator=(const CudaExecutable&) = delete;

  [[nodiscard]] const ExecutablePlan& plan() const noexcept { return plan_; }
  // Copies the inputs in (padding them to the bucket when replaying), runs, copies the actual rows of the
  // outputs out. views: weights, inputs, outputs (Operation<Execute>). `gemm` as enqueue_steps takes it; a graph
  // captured without cuBLASLt is captured again once it is given; a replay that captures runs its steps uncaptured
  // first (at the bucket's extent) and replays from the next run on. Not thread-safe: one stream runs it.
  [[nodiscard]] Status run(const CheckedExecute& checked, std::span<const BufferView> views, bool replay,
                           blas::CublasLtGemm* gemm, CudaTarget& target) const;

 private:
  CudaExecutable(ExecutablePlan plan, std::byte* arena, cudaStream_t stream)
      : plan_(std::move(plan)), arena_(arena), stream_(stream) {}
  Status copy_in(const CheckedExecute& checked, std::span<const BufferView> views, bool pad, CudaTarget& target) const;
  Status capture(const std::byte* weights, blas::CublasLtGemm* gemm, CudaTarget& target) const;

  ExecutablePlan plan_;
  std::byte* arena_;
  cudaStream_t stream_;
  mutable cudaGraphExec_t exec_ = nullptr;
  mutable const std::byte* captured_weights_ = nullptr;
  mutable bool captured_with_cublaslt_ = false;
};

// What graph::Execute keeps per stream.
class GraphStreamState final : public TargetState {
 public:
  static Result<std::unique_ptr<GraphStreamState>> open(CudaTarget& target);

  [[nodiscard]] Result<std::shared_ptr<const CudaExecutable>> executable(const CheckedExecute& checked,
                                                                         CudaTarget& target);
  [[nodiscard]] CacheStats stats() const { return executables_.stats(); }

 private:
  explicit GraphStreamState(cache::CacheOptions<CudaExecutable> options) : executables_(std::move(options)) {}
  cache::Cache<CudaExecutable> executables_;  // its disk keys begin with what executables depend on: GPU, format
};

}  // namespace accel::graph::cuda

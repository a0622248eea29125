// Executables on one CUDA stream: a specialised plan, its inputs copied in and padded to the bucket on the device,
// and its run either replayed as one captured CUDA graph (every op at the bucket's extent) or launched op by op at
// the actual extent. Cached per stream (a captured graph belongs to the stream that runs it) in an LRU by entries,
// with the plans on disk. The executables of a stream share one arena (StreamArena).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
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

// The one arena of a stream's executables. A stream runs one thing at a time, and everything that touches an arena
// (inputs copied in, the steps, outputs copied out) is ordered on it, so every executable of the stream can use the
// same bytes: a server that has made all of a model's batch shapes holds the largest one's arena, not their sum
// (106 shapes of all-MiniLM-L6-v2 took 4.9 GB apart, docs/PERFORMANCE.md §72). It grows to the largest plan run so
// far, the old bytes freed in stream order; a graph captured over them is captured again when next run.
class StreamArena {
 public:
  explicit StreamArena(cudaStream_t stream) : stream_(stream) {}
  ~StreamArena();
  StreamArena(const StreamArena&) = delete;
  StreamArena& operator=(const StreamArena&) = delete;

  // The arena, grown first if it is smaller than `bytes`.
  [[nodiscard]] Result<std::byte*> at_least(std::uint64_t bytes, CudaTarget& target);
  // Read by a device's report from another thread.
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_.load(std::memory_order_relaxed); }

 private:
  cudaStream_t stream_;
  std::byte* base_ = nullptr;
  std::atomic<std::uint64_t> bytes_ = 0;
};

class CudaExecutable {
 public:
  static std::shared_ptr<const CudaExecutable> make(ExecutablePlan plan, std::shared_ptr<StreamArena> arena);
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
  CudaExecutable(ExecutablePlan plan, std::shared_ptr<StreamArena> arena)
      : plan_(std::move(plan)), arena_(std::move(arena)) {}
  Status copy_in(const CheckedExecute& checked, std::span<const BufferView> views, std::byte* arena, bool pad,
                 CudaTarget& target) const;
  Status capture(std::byte* arena, const std::byte* weights, blas::CublasLtGemm* gemm, CudaTarget& target) const;

  ExecutablePlan plan_;
  std::shared_ptr<StreamArena> arena_;
  mutable cudaGraphExec_t exec_ = nullptr;
  mutable const std::byte* captured_arena_ = nullptr;
  mutable const std::byte* captured_weights_ = nullptr;
  mutable bool captured_with_cublaslt_ = false;
};

// What graph::Execute keeps per stream.
class GraphStreamState final : public TargetState {
 public:
  static Result<std::unique_ptr<GraphStreamState>> open(CudaTarget& target);

  [[nodiscard]] Result<std::shared_ptr<const CudaExecutable>> executable(const CheckedExecute& checked);
  // The cache's, its bytes the stream's arena.
  [[nodiscard]] CacheStats stats() const;

 private:
  GraphStreamState(cache::CacheOptions<CudaExecutable> options, std::shared_ptr<StreamArena> arena)
      : arena_(std::move(arena)), executables_(std::move(options)) {}
  std::shared_ptr<StreamArena> arena_;
  cache::Cache<CudaExecutable> executables_;  // its disk keys begin with what executables depend on: GPU, format
};

}  // namespace accel::graph::cuda

// FFTs on CUDA through cuFFT, with a per-stream LRU cache of plans keyed by everything a plan depends on: type,
// precision, sizes, batch, both layouts (embed, stride, distance) and the placement. The direction of a c2c
// transform and the normalisation are not in the key: cuFFT takes the direction at execution, and accel scales
// afterwards (fft_scale.hpp), so one plan serves both directions. A cache belongs to one stream of one device,
// so the device is part of its key by construction, and so is the stream the plan is bound to.
//
// Plans do not allocate their work area (cufftSetAutoAllocation(plan, 0)): the run takes it from the stream's
// workspace, which comes from the device's memory pool and is shared by every request of the stream, instead of
// each cached plan holding its own.
#pragma once

#include <cuda_runtime.h>
#include <cufft.h>

#include <memory>
#include <string_view>

#include "accel/core/cache_stats.hpp"
#include "accel/core/library_version.hpp"
#include "accel/libs/fft/fft.hpp"
#include "cache/cache.hpp"
#include "libs/fft/captured_executions.hpp"
#include "libs/fft/fft_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::fft {

// A Status for a failed cuFFT call, classified as cuda_status classifies CUDA's.
[[nodiscard]] Status cufft_status(cufftResult result, std::string_view what);

[[nodiscard]] LibraryVersion cufft_library();

// One cuFFT plan, bound to one stream; its work area is given at each run, and its executions repeated over the same
// addresses are replayed as CUDA graphs (captured_executions.hpp).
class CufftPlan {
 public:
  // The plan of a checked geometry, bound to `stream`; its graphs count into `counters`.
  static Result<std::shared_ptr<const CufftPlan>> make(const FftGeometry& geometry, cudaStream_t stream,
                                                       std::shared_ptr<CaptureCounters> counters);
  // Waits for the plan's stream first: an evicted plan may still have a transform in flight there.
  ~CufftPlan();
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;

  [[nodiscard]] std::uint64_t work_bytes() const noexcept { return work_bytes_; }
  // Enqueues the transform (not its normalisation) on the plan's stream, with `work` of at least work_bytes().
  [[nodiscard]] Status execute(const FftGeometry& geometry, const FftOperands& operands, void* work) const;

 private:
  CufftPlan(cufftHandle handle, cudaStream_t stream, std::shared_ptr<CaptureCounters> counters)
      : handle_(handle),
        stream_(stream),
        executions_(std::make_unique<CapturedExecutions>(stream, std::move(counters))) {}
  // cuFFT's own execution call, on the plan's stream.
  [[nodiscard]] Status enqueue(const FftGeometry& geometry, const FftOperands& operands, void* work) const;

  cufftHandle handle_;
  cudaStream_t stream_;
  std::uint64_t work_bytes_ = 0;
  // Mutable: only the plan's stream's thread executes it, and its graphs change with the addresses it is given.
  // Destroyed before the plan's handle.
  mutable std::unique_ptr<CapturedExecutions> executions_;
};

// What cuFFT keeps per stream: the plan cache ("cufft-plans") and the counts of its plans' graphs ("cufft-graphs").
class CufftPlans final : public TargetState {
 public:
  static Result<std::unique_ptr<CufftPlans>> open(CudaTarget& target);

  // The plan of a checked geometry: cached, or made.
  [[nodiscard]] Result<std::shared_ptr<const CufftPlan>> plan(const FftGeometry& geometry);
  [[nodiscard]] CacheStats stats() const { return plans_.stats(); }
  [[nodiscard]] CacheStats graph_stats() const { return counters_->stats(); }

 private:
  explicit CufftPlans(cudaStream_t stream);

  cudaStream_t stream_;
  std::shared_ptr<CaptureCounters> counters_ = std::make_shared<CaptureCounters>();
  cache::Cache<CufftPlan> plans_;
};

}  // namespace accel::fft

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
#include "libs/fft/fft_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel::fft {

// A Status for a failed cuFFT call, classified as cuda_status classifies CUDA's.
[[nodiscard]] Status cufft_status(cufftResult result, std::string_view what);

[[nodiscard]] LibraryVersion cufft_library();

// One cuFFT plan, bound to one stream; its work area is given at each run.
class CufftPlan {
 public:
  // The plan of a checked geometry, bound to `stream`.
  static Result<std::shared_ptr<const CufftPlan>> make(const FftGeometry& geometry, cudaStream_t stream);
  // Waits for the plan's stream first: an evicted plan may still have a transform in flight there.
  ~CufftPlan();
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;

  [[nodiscard]] std::uint64_t work_bytes() const noexcept { return work_bytes_; }
  // Enqueues the transform (not its normalisation) on the plan's stream, with `work` of at least work_bytes().
  [[nodiscard]] Status execute(const FftGeometry& geometry, const FftOperands& operands, void* work) const;

 private:
  CufftPlan(cufftHandle handle, cudaStream_t stream) : handle_(handle), stream_(stream) {}

  cufftHandle handle_;
  cudaStream_t stream_;
  std::uint64_t work_bytes_ = 0;
};

// What cuFFT keeps per stream: the plan cache ("cufft-plans").
class CufftPlans final : public TargetState {
 public:
  static Result<std::unique_ptr<CufftPlans>> open(CudaTarget& target);

  // The plan of a checked geometry: cached, or made.
  [[nodiscard]] Result<std::shared_ptr<const CufftPlan>> plan(const FftGeometry& geometry);
  [[nodiscard]] CacheStats stats() const { return plans_.stats(); }

 private:
  explicit CufftPlans(cudaStream_t stream);

  cudaStream_t stream_;
  cache::Cache<CufftPlan> plans_;
};

}  // namespace accel::fft

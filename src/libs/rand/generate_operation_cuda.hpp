// rand::Generate on a CUDA stream: Philox through our kernel (philox_kernel.cu, cuRAND's device API), the other
// generators through cuRAND's host API, one generator per kind and stream, kept in the stream's RandState.
#pragma once

#include <memory>

#include "cache/cache.hpp"
#include "libs/rand/curand_generator.hpp"
#include "libs/rand/generate_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

namespace rand {
// What the family keeps per stream: its cuRAND generators, made on first use of each kind ("curand-generators").
class RandState final : public TargetState {
 public:
  static Result<std::unique_ptr<RandState>> open(CudaTarget& target);

  // The stream's generator of `generator` (not Philox), made the first time.
  [[nodiscard]] Result<std::shared_ptr<const CurandGenerator>> generator(Generator generator);
  [[nodiscard]] CacheStats stats() const { return generators_->stats(); }

 private:
  explicit RandState(cudaStream_t stream);
  cudaStream_t stream_;
  std::unique_ptr<cache::Cache<CurandGenerator>> generators_;
};
}  // namespace rand

template <>
struct CudaOperation<rand::Generate> {
  // The cuRAND generator of the request's kind; none for Philox, whose kernel needs nothing made beforehand.
  struct Plan {
    std::shared_ptr<const rand::CurandGenerator> generator;
  };

  static Result<Plan> plan(const rand::Generate& request, const rand::CheckedGenerate& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static Status run(const rand::Generate& request, const rand::CheckedGenerate& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report);
};

}  // namespace accel

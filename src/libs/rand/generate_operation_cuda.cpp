#include "libs/rand/generate_operation_cuda.hpp"

#include <fmt/format.h>

#include <array>

#include "libs/rand/philox_kernel.hpp"

namespace accel {
namespace rand {

RandState::RandState(cudaStream_t stream)
    : stream_(stream),
      generators_(std::make_unique<cache::Cache<CurandGenerator>>(
          cache::CacheOptions<CurandGenerator>{.name = "curand-generators", .max_entries = 3})) {}

Result<std::unique_ptr<RandState>> RandState::open(CudaTarget& target) {
  return std::unique_ptr<RandState>(new RandState(target.stream()));
}

// Keyed by the generator's kind alone: the cache belongs to one stream, and a generator is seeded and positioned
// by each request. Three kinds, three entries: nothing is evicted.
Result<std::shared_ptr<const CurandGenerator>> RandState::generator(Generator generator) {
  const std::array<std::byte, 1> key = {static_cast<std::byte>(generator)};
  return generators_->get(key, [&]() -> Result<std::shared_ptr<const CurandGenerator>> {
    ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<CurandGenerator> made, CurandGenerator::on_device(generator, stream_));
    return std::shared_ptr<const CurandGenerator>(std::move(made));
  });
}

}  // namespace rand

Result<CudaOperation<rand::Generate>::Plan> CudaOperation<rand::Generate>::plan(const rand::Generate&,
                                                                                const rand::CheckedGenerate& checked,
                                                                                CudaTarget& target) {
  if (checked.philox() || checked.count == 0) return Plan{};
  ACCEL_ASSIGN_OR_RETURN(rand::RandState * state, target.stream_state<rand::RandState>());
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const rand::CurandGenerator> generator, state->generator(checked.generator));
  return Plan{.generator = std::move(generator)};
}

Status CudaOperation<rand::Generate>::run(const rand::Generate& request, const rand::CheckedGenerate& checked,
                                          const Plan& plan, std::span<const BufferView> views, CudaRun& run) {
  void* output = views[Operation<rand::Generate>::output].data;
  if (checked.count == 0) return Status();
  if (checked.philox()) {
    return run.target.check(rand::launch_philox(rand::philox_args(request, checked, output), run.target.stream()),
                            "launching the Philox kernel");
  }
  return launch_status(run.target, plan.generator->generate(request, checked, output), "cuRAND");
}

void CudaOperation<rand::Generate>::describe(CudaTarget& target, LibraryReport& report) {
  report.report(rand::curand_library());
  if (rand::RandState* state = target.existing_stream_state<rand::RandState>()) report.report(state->stats());
}

}  // namespace accel

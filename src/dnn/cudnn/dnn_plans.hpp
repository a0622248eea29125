// The cuDNN plans of one device context: an in-memory LRU shared by the device's streams (one build per key
// under concurrent misses), over a persistent tier on disk that other processes share.
//
// In memory, a plan is keyed by what the request says (plan_key.hpp); equal keys are equal graphs. On disk the
// key is prefixed with everything else a serialised plan depends on: this file's format, the cuDNN library
// version this process runs with, the frontend version, the GPU's compute capability and name. A disk entry is
// never trusted: damaged entries are caught by the store's checksum, and an entry cuDNN refuses to load is
// erased and the plan rebuilt (both counted as disk_rejects). Both tiers are one cache::Cache ("cudnn-plans");
// plans whose engine cuDNN cannot serialise stay in memory (counted as disk_skips).
#pragma once

#include <cudnn.h>

#include <functional>
#include <memory>
#include <span>
#include <string>

#include "accel/core/cache_stats.hpp"
#include "accel/dnn/graph.hpp"
#include "cache/cache.hpp"
#include "dnn/cudnn/cudnn_plan.hpp"

namespace accel::dnn::cudnn {

struct DnnPlanOptions {
  std::size_t capacity = 1024;
  bool persistent = true;
  std::string directory;  // empty: DiskStore::default_directory("cudnn-plans")
  std::uint64_t directory_bytes = 256ull << 20;
  int compute_capability = 0;
  std::string device_name;
};

// A plan and the graph it runs (whose bound tensors a request's bindings are checked against).
struct PlannedGraph {
  std::shared_ptr<const Graph> graph;
  std::shared_ptr<const CudnnPlan> plan;
};

class DnnPlans {
 public:
  // A persistent tier that cannot be opened (read-only home, no space) is not fatal: plans stay in memory,
  // and a warning says why.
  explicit DnnPlans(const DnnPlanOptions& options);

  using GraphFactory = std::function<Result<std::shared_ptr<const Graph>>()>;
  // The plan of `key`, from memory, else from disk, else built from `graph()` with `handle` (whose device is
  // this context's).
  [[nodiscard]] Result<std::shared_ptr<const PlannedGraph>> find_or_build(std::span<const std::byte> key,
                                                                          cudnnHandle_t handle,
                                                                          const GraphFactory& graph);

  // builds are heuristics + plan builds; hits include requesters that waited for another's build of the key.
  [[nodiscard]] CacheStats stats() const { return plans_.stats(); }

 private:
  cache::Cache<PlannedGraph> plans_;
};

}  // namespace accel::dnn::cudnn

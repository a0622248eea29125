// Executables on the CPU device: a specialised plan run op by op at the actual extent (no replay to amortise, so
// nothing runs at a bucket's size), in float (a bf16 graph's matmuls in bf16: cpu_bf16_graph.hpp), with oneDNN for the
// matmuls of stored weights (packed once, shared by a graph's buckets) and the graph kernels' CPU implementations for
// the rest. Arenas are host memory taken from a small pool per executable, so that several CPU devices may run one
// executable at once.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "accel/core/cache_stats.hpp"
#include "cache/cache.hpp"
#include "graph/cpu/cpu_bf16_graph.hpp"
#include "graph/cpu/cpu_matmul_packs.hpp"
#include "graph/executable_plan.hpp"
#include "graph/execute_operation.hpp"

namespace accel::graph::cpu {

// not_supported, naming the tensor, for a floating tensor that is neither f32 nor bf16, or for a bf16 one on a CPU
// without avx512_bf16 or AMX (a bf16 graph runs its matmuls in bf16: cpu_bf16_graph.hpp).
[[nodiscard]] Status check_support(const Graph& graph);

// Where a run's time went, step by step, in the order they ran (bench/graph/cpu_steps_bench.cpp reads it).
struct StepTime {
  std::uint32_t node = 0;
  double microseconds = 0;
};

// The weights a run reads: `data`, where the plan's parameters lie, and `identity`, the caller's buffer and the
// version of its contents, for which packed weights are kept. For a bf16 graph (`bf16`), `data` is its f32 copy's
// parameters and its matmuls' bf16 weights are packed from the caller's buffer.
struct RunWeights {
  const std::byte* data = nullptr;
  WeightsIdentity identity;
  const Bf16Graph* bf16 = nullptr;
};

// Runs the plan's steps at the extents of `extent` on an arena laid out by the plan; the matmuls' packed weights
// are taken from (or made into) `packs`. With `times`, each step's time is appended there.
[[nodiscard]] Status run_steps(const ExecutablePlan& plan, const SymbolValues& extent, std::byte* arena,
                               const RunWeights& weights, MatmulPacks& packs, std::vector<StepTime>* times = nullptr);

// What the executables of one graph (every binding of it) share while any of them lives: for a bf16 graph its f32
// copy, whose parameters are converted once per weights contents, and the matmuls' packed weights (a pack does not
// depend on the rows), so that no bucket converts or packs again.
struct SharedGraph {
  std::shared_ptr<const Graph> planned;  // the graph the plans are of: the request's, or a bf16 graph's f32 copy
  std::shared_ptr<const Bf16Graph> bf16;
  MatmulPacks packs;
};

class CpuExecutable {
 public:
  CpuExecutable(ExecutablePlan plan, std::shared_ptr<SharedGraph> shared)
      : plan_(std::move(plan)), shared_(std::move(shared)) {}
  [[nodiscard]] const ExecutablePlan& plan() const noexcept { return plan_; }
  // Copies the inputs in, runs, copies the outputs out. views: weights, inputs, outputs (Operation<Execute>).
  [[nodiscard]] Status run(const CheckedExecute& checked, std::span<const BufferView> views) const;

 private:
  std::unique_ptr<std::byte[]> take_arena() const;
  void give_back(std::unique_ptr<std::byte[]> arena) const;

  ExecutablePlan plan_;
  std::shared_ptr<SharedGraph> shared_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<std::byte[]>> arenas_;
};

// The process's CPU executables: an LRU by entries and arena bytes, one compile per key, with a persistent tier
// ("graph-executables" in the cache directory).
class CpuExecutables {
 public:
  static CpuExecutables& process();
  [[nodiscard]] Status run(const CheckedExecute& checked, std::span<const BufferView> views);
  [[nodiscard]] CacheStats stats() const { return cache_.stats(); }

 private:
  CpuExecutables();
  // What the executables of `graph` share: kept, or made.
  Result<std::shared_ptr<SharedGraph>> shared_for(const std::shared_ptr<const Graph>& graph);

  cache::Cache<CpuExecutable> cache_;
  std::mutex shared_mutex_;
  std::unordered_map<std::string, std::weak_ptr<SharedGraph>> shared_by_encoding_;
};

}  // namespace accel::graph::cpu

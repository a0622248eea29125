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

class CpuExecutable {
 public:
  // `bf16`: the graph the request names is bf16, and `plan` is of its f32 copy. `packs`: the packed weights of the
  // graph's matmuls, shared by the executables of every binding of one graph (a pack does not depend on the rows).
  CpuExecutable(ExecutablePlan plan, std::shared_ptr<MatmulPacks> packs, std::shared_ptr<const Bf16Graph> bf16)
      : plan_(std::move(plan)), bf16_(std::move(bf16)), packs_(std::move(packs)) {}
  [[nodiscard]] const ExecutablePlan& plan() const noexcept { return plan_; }
  // Copies the inputs in, runs, copies the outputs out. views: weights, inputs, outputs (Operation<Execute>).
  [[nodiscard]] Status run(const CheckedExecute& checked, std::span<const BufferView> views) const;

 private:
  std::unique_ptr<std::byte[]> take_arena() const;
  void give_back(std::unique_ptr<std::byte[]> arena) const;

  ExecutablePlan plan_;
  std::shared_ptr<const Bf16Graph> bf16_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<std::byte[]>> arenas_;
  // Its matmuls' weights, packed once per weights buffer (not once per run, nor once per bucket).
  std::shared_ptr<MatmulPacks> packs_;
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
  // The packs of the graph with this encoding, shared by its executables while any of them lives.
  std::shared_ptr<MatmulPacks> packs_for(const std::vector<std::byte>& encoding);

  cache::Cache<CpuExecutable> cache_;
  std::mutex packs_mutex_;
  std::unordered_map<std::string, std::weak_ptr<MatmulPacks>> packs_by_graph_;  // by encoding
};

}  // namespace accel::graph::cpu

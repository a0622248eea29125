#include "graph/cpu/cpu_executables.hpp"

#include <fmt/format.h>

#include <cstring>

#include "graph/executable_cache_options.hpp"
#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cpu_packed_matmul.hpp"
#include "libs/blas/cpu_gemm.hpp"

namespace accel::graph::cpu {

namespace {
constexpr std::size_t kArenasKept = 2;
}  // namespace

Status check_support(const Graph& graph) {
  for (const TensorInfo& t : graph.tensors()) {
    if (t.dtype == DType::f16 || t.dtype == DType::f64)
      return not_supported(
          fmt::format("the CPU device runs graphs in f32 or bf16; {} is {}", t.name, to_string(t.dtype)));
    if (t.dtype == DType::bf16 && !cpu_has_bf16())
      return not_supported(fmt::format(
          "the CPU device runs a bf16 graph's matmuls in bf16, which needs a CPU with avx512_bf16 or AMX; this one "
          "has neither ({} is bf16: build the graph in f32)",
          t.name));
  }
  return Status();
}

namespace {

// `count` elements from `from` to `to`, converted where the caller's dtype is not the plan's (a bf16 graph's
// inputs and outputs, kept in f32 by the CPU).
void copy_as(DType from_dtype, const void* from, DType to_dtype, void* to, std::uint64_t count) {
  if (from_dtype == to_dtype) {
    std::memcpy(to, from, count * size_of(from_dtype));
    return;
  }
  static_cast<void>(cast(from_dtype, from, to_dtype, to, static_cast<std::int64_t>(count)));
}

}  // namespace

std::unique_ptr<std::byte[]> CpuExecutable::take_arena() const {
  {
    std::lock_guard lock(mutex_);
    if (!arenas_.empty()) {
      std::unique_ptr<std::byte[]> arena = std::move(arenas_.back());
      arenas_.pop_back();
      return arena;
    }
  }
  return std::make_unique_for_overwrite<std::byte[]>(std::max<std::uint64_t>(plan_.arena_bytes(), 1));
}

void CpuExecutable::give_back(std::unique_ptr<std::byte[]> arena) const {
  std::lock_guard lock(mutex_);
  if (arenas_.size() < kArenasKept) arenas_.push_back(std::move(arena));
}

Status CpuExecutable::run(const CheckedExecute& checked, std::span<const BufferView> views) const {
  const WeightsIdentity identity{.base = static_cast<const std::byte*>(views[0].data), .version = views[0].version};
  // A bf16 graph reads its f32 copy's parameters, converted once per contents of the caller's weights.
  const Bf16Graph* bf16 = shared_->bf16.get();
  const std::shared_ptr<const std::byte[]> f32_weights = bf16 ? bf16->f32_weights(identity) : nullptr;
  const RunWeights weights{.data = bf16 ? f32_weights.get() : identity.base, .identity = identity, .bf16 = bf16};
  const std::vector<TensorInfo>& given = checked.graph->tensors();  // the caller's dtypes
  std::unique_ptr<std::byte[]> arena = take_arena();
  const std::size_t first_output = 1 + checked.inputs.size();
  for (std::size_t i = 0; i < checked.inputs.size(); ++i) {
    const std::uint32_t tensor = checked.input_tensors[i];
    const TensorInfo& t = plan_.graph().tensors()[tensor];
    copy_as(given[tensor].dtype, views[1 + i].at(checked.input_firsts[i]), t.dtype,
            arena.get() + plan_.slot(tensor).offset, element_count(t.shape, checked.actual));
  }
  Status ran = run_steps(plan_, checked.actual, arena.get(), weights, shared_->packs);
  if (ran.ok()) {
    for (std::size_t i = 0; i < checked.outputs.size(); ++i) {
      const std::uint32_t tensor = plan_.graph().outputs()[i].tensor;
      const TensorInfo& t = plan_.graph().tensors()[tensor];
      const Slot& slot = plan_.slot(tensor);
      const std::byte* source = slot.storage == Storage::weights ? weights.data : arena.get();
      copy_as(t.dtype, source + slot.offset, given[tensor].dtype, views[first_output + i].at(checked.output_firsts[i]),
              element_count(t.shape, checked.actual));
    }
  }
  give_back(std::move(arena));
  return ran;
}

CpuExecutables::CpuExecutables()
    : cache_(executable_cache_options<CpuExecutable>(
          fmt::format("accel-graph-executable/{}/cpu/{}/", kExecutableDiskFormat, blas::cpu_blas_library().version),
          graph::Options{})) {}

CpuExecutables& CpuExecutables::process() {
  static CpuExecutables executables;
  return executables;
}

Result<std::shared_ptr<SharedGraph>> CpuExecutables::shared_for(const std::shared_ptr<const Graph>& graph) {
  const std::vector<std::byte>& encoding = graph->encoding();
  std::lock_guard lock(shared_mutex_);
  std::erase_if(shared_by_encoding_, [](const auto& entry) { return entry.second.expired(); });
  std::weak_ptr<SharedGraph>& kept =
      shared_by_encoding_[std::string(reinterpret_cast<const char*>(encoding.data()), encoding.size())];
  if (std::shared_ptr<SharedGraph> shared = kept.lock()) return shared;
  auto shared = std::make_shared<SharedGraph>();
  shared->planned = graph;
  // A bf16 graph's executables plan (and the disk keeps the plans of) its f32 copy.
  if (has_bf16(*graph)) {
    ACCEL_ASSIGN_OR_RETURN(shared->bf16, Bf16Graph::make(*graph));
    shared->planned = shared->bf16->f32();
  }
  kept = shared;
  return shared;
}

Status CpuExecutables::run(const CheckedExecute& checked, std::span<const BufferView> views) {
  using Made = Result<std::shared_ptr<const CpuExecutable>>;
  const auto build = [&]() -> Made {
    ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<SharedGraph> shared, shared_for(checked.graph));
    ACCEL_ASSIGN_OR_RETURN(ExecutablePlan plan, ExecutablePlan::make(shared->planned, checked.compiled));
    return std::make_shared<const CpuExecutable>(std::move(plan), std::move(shared));
  };
  const auto decode = [&](std::span<const std::byte> stored) -> Made {
    ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<SharedGraph> shared, shared_for(checked.graph));
    ACCEL_ASSIGN_OR_RETURN(ExecutablePlan plan, ExecutablePlan::decode(shared->planned, stored));
    return std::make_shared<const CpuExecutable>(std::move(plan), std::move(shared));
  };
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const CpuExecutable> executable, cache_.get(*checked.key, build, decode));
  return executable->run(checked, views);
}

}  // namespace accel::graph::cpu

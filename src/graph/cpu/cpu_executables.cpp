#include "graph/cpu/cpu_executables.hpp"

#include <fmt/format.h>

#include <cstring>

#include "graph/executable_cache_options.hpp"
#include "libs/blas/cpu_gemm.hpp"

namespace accel::graph::cpu {

namespace {
constexpr std::size_t kArenasKept = 2;
}  // namespace

Status check_support(const Graph& graph) {
  for (const TensorInfo& t : graph.tensors())
    if (t.dtype == DType::f16 || t.dtype == DType::bf16 || t.dtype == DType::f64)
      return not_supported(fmt::format("the CPU device runs graphs in f32; {} is {}", t.name, to_string(t.dtype)));
  return Status();
}

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
  std::unique_ptr<std::byte[]> arena = take_arena();
  const std::size_t first_output = 1 + checked.inputs.size();
  for (std::size_t i = 0; i < checked.inputs.size(); ++i) {
    const BufferView& view = views[1 + i];
    const Slot& slot = plan_.slot(checked.input_tensors[i]);
    const TensorInfo& t = plan_.graph().tensors()[checked.input_tensors[i]];
    std::memcpy(arena.get() + slot.offset, view.data, element_count(t.shape, checked.actual) * size_of(t.dtype));
  }
  Status ran = run_steps(plan_, checked.actual, arena.get(), static_cast<const std::byte*>(views[0].data),
                         views[0].version, packs_);
  if (ran.ok()) {
    for (std::size_t i = 0; i < checked.outputs.size(); ++i) {
      const std::uint32_t tensor = plan_.graph().outputs()[i].tensor;
      const TensorInfo& t = plan_.graph().tensors()[tensor];
      const Slot& slot = plan_.slot(tensor);
      const std::byte* source =
          slot.storage == Storage::weights ? static_cast<const std::byte*>(views[0].data) : arena.get();
      std::memcpy(views[first_output + i].data, source + slot.offset,
                  element_count(t.shape, checked.actual) * size_of(t.dtype));
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

Status CpuExecutables::run(const CheckedExecute& checked, std::span<const BufferView> views) {
  const std::string context = "cpu";
  const std::vector<std::byte> key = executable_key(
      *checked.graph, checked.compiled, {reinterpret_cast<const std::byte*>(context.data()), context.size()});
  using Made = Result<std::shared_ptr<const CpuExecutable>>;
  const auto build = [&]() -> Made {
    ACCEL_ASSIGN_OR_RETURN(ExecutablePlan plan, ExecutablePlan::make(checked.graph, checked.compiled));
    return std::make_shared<const CpuExecutable>(std::move(plan));
  };
  const auto decode = [&](std::span<const std::byte> stored) -> Made {
    ACCEL_ASSIGN_OR_RETURN(ExecutablePlan plan, ExecutablePlan::decode(checked.graph, stored));
    return std::make_shared<const CpuExecutable>(std::move(plan));
  };
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const CpuExecutable> executable, cache_.get(key, build, decode));
  return executable->run(checked, views);
}

}  // namespace accel::graph::cpu

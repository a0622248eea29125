#include "dnn/cudnn/dnn_plans.hpp"

#include "accel/core/byte_codec.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

namespace accel::dnn::cudnn {
namespace {

// Bump when what a disk entry holds changes meaning.
constexpr std::uint32_t kDiskFormat = 1;

// A disk entry: the engine's name (u32 length, bytes), then the frontend's serialisation of the plan.
std::vector<std::byte> disk_value(const std::string& engine, std::span<const std::byte> serialized) {
  ByteWriter value;
  value.string(engine).raw(serialized.data(), serialized.size());
  return value.take();
}

Result<std::shared_ptr<const CudnnPlan>> load_disk_value(std::span<const std::byte> value, cudnnHandle_t handle) {
  ByteReader in(value);
  std::string engine;
  std::span<const std::byte> serialized;
  if (!in.string(engine).ok() || !in.view(serialized, in.remaining()).ok()) {
    return invalid_argument("a stored cuDNN plan is cut short");
  }
  return load_plan(serialized, std::move(engine), handle);
}

cache::CacheOptions<PlannedGraph> cache_options(const DnnPlanOptions& options) {
  const std::string prefix = fmt::format("accel-cudnn-plan/{}/{}/sm{}/{}/", kDiskFormat, cudnn_library(),
                                         options.compute_capability, options.device_name);
  const auto* prefix_bytes = reinterpret_cast<const std::byte*>(prefix.data());
  cache::CacheOptions<PlannedGraph> cache{.name = "cudnn-plans",
                                          .max_entries = std::max<std::size_t>(options.capacity, 1),
                                          .disk_key_prefix = cache::Bytes(prefix_bytes, prefix_bytes + prefix.size())};
  if (!options.persistent) return cache;
  const std::filesystem::path directory = options.directory.empty() ? cache::DiskStore::default_directory("cudnn-plans")
                                                                    : std::filesystem::path(options.directory);
  cache.disk = cache::DiskStore::open_or_warn(
      {.directory = directory, .max_bytes = options.directory_bytes, .format_version = kDiskFormat}, "cuDNN plans");
  return cache;
}

}  // namespace

DnnPlans::DnnPlans(const DnnPlanOptions& options) : plans_(cache_options(options)) {}

Result<std::shared_ptr<const PlannedGraph>> DnnPlans::find_or_build(std::span<const std::byte> key,
                                                                    cudnnHandle_t handle, const GraphFactory& graph) {
  // The graph is described once per miss, for whichever of loading and building needs it.
  Result<std::shared_ptr<const Graph>> described = internal_error("the graph was not described");
  bool have_graph = false;
  const auto describe = [&]() -> Result<std::shared_ptr<const Graph>>& {
    if (!have_graph) {
      described = graph();
      have_graph = true;
    }
    return described;
  };
  const auto decode = [&](std::span<const std::byte> stored) -> Result<std::shared_ptr<const PlannedGraph>> {
    ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> planned_graph, describe());
    Result<std::shared_ptr<const CudnnPlan>> loaded = load_disk_value(stored, handle);
    if (!loaded.ok()) {
      spdlog::warn("accel: a stored cuDNN plan did not load ({}); building it again", loaded.status().to_string());
      return loaded.status();
    }
    return std::make_shared<const PlannedGraph>(std::move(planned_graph), std::move(*loaded));
  };
  const auto build = [&]() -> Result<cache::Built<PlannedGraph>> {
    ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> planned_graph, describe());
    ACCEL_ASSIGN_OR_RETURN(BuiltPlan built, build_plan(*planned_graph, handle));
    std::optional<cache::Bytes> encoded;
    if (!built.serialized.empty()) encoded = disk_value(engine_name(*built.plan), built.serialized);
    return cache::Built<PlannedGraph>{
        std::make_shared<const PlannedGraph>(std::move(planned_graph), std::move(built.plan)), std::move(encoded)};
  };
  return plans_.get(key, build, decode);
}

}  // namespace accel::dnn::cudnn

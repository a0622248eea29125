#include "dnn/cudnn/dnn_plans.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>

#include "core/elapsed.hpp"

namespace accel::dnn::cudnn {
namespace {

// Bump when what a disk entry holds changes meaning.
constexpr std::uint32_t kDiskFormat = 1;

// A disk entry: the engine's name (u32 length, bytes), then the frontend's serialisation of the plan.
std::vector<std::byte> disk_value(const std::string& engine, std::span<const std::byte> serialized) {
  const auto length = static_cast<std::uint32_t>(engine.size());
  std::vector<std::byte> value(sizeof length + engine.size() + serialized.size());
  std::memcpy(value.data(), &length, sizeof length);
  std::memcpy(value.data() + sizeof length, engine.data(), engine.size());
  std::memcpy(value.data() + sizeof length + engine.size(), serialized.data(), serialized.size());
  return value;
}

Result<std::shared_ptr<const CudnnPlan>> load_disk_value(std::span<const std::byte> value, cudnnHandle_t handle) {
  std::uint32_t length = 0;
  if (value.size() < sizeof length) return invalid_argument("a stored cuDNN plan is cut short");
  std::memcpy(&length, value.data(), sizeof length);
  if (length > value.size() - sizeof length) return invalid_argument("a stored cuDNN plan is cut short");
  std::string engine(reinterpret_cast<const char*>(value.data() + sizeof length), length);
  return load_plan(value.subspan(sizeof length + length), std::move(engine), handle);
}

}  // namespace

DnnPlans::DnnPlans(DnnPlanOptions options) : memory_(options.capacity) {
  const std::string prefix = fmt::format("accel-cudnn-plan/{}/{}/sm{}/{}/", kDiskFormat, cudnn_library(),
                                         options.compute_capability, options.device_name);
  disk_prefix_.resize(prefix.size());
  std::memcpy(disk_prefix_.data(), prefix.data(), prefix.size());
  if (!options.persistent) return;
  const std::filesystem::path directory = options.directory.empty() ? cache::DiskStore::default_directory("cudnn-plans")
                                                                    : std::filesystem::path(options.directory);
  Result<std::unique_ptr<cache::DiskStore>> store = cache::DiskStore::open(
      {.directory = directory, .max_bytes = options.directory_bytes, .format_version = kDiskFormat});
  if (store.ok()) {
    disk_ = std::move(*store);
  } else {
    spdlog::warn("accel: cuDNN plans stay in memory only: {}", store.status().to_string());
  }
}

Result<std::shared_ptr<const PlannedGraph>> DnnPlans::find_or_build(std::span<const std::byte> key,
                                                                    cudnnHandle_t handle, const GraphFactory& graph) {
  return memory_.find_or_build(key, [&] { return load_or_build(key, handle, graph); });
}

Result<std::shared_ptr<const PlannedGraph>> DnnPlans::load_or_build(std::span<const std::byte> key,
                                                                    cudnnHandle_t handle, const GraphFactory& graph) {
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> described, graph());
  std::vector<std::byte> disk_key;
  if (disk_) {
    disk_key = disk_prefix_;
    disk_key.insert(disk_key.end(), key.begin(), key.end());
    const auto start = std::chrono::steady_clock::now();
    Result<std::optional<std::vector<std::byte>>> stored = disk_->load(disk_key);
    if (stored.ok() && stored->has_value()) {
      Result<std::shared_ptr<const CudnnPlan>> loaded = load_disk_value(**stored, handle);
      if (loaded.ok()) {
        const std::uint64_t micros = micros_since(start);
        count([&](DnnPlanStats& s) {
          ++s.disk_loads;
          s.load_micros += micros;
        });
        return std::make_shared<const PlannedGraph>(std::move(described), std::move(*loaded));
      }
      spdlog::warn("accel: a stored cuDNN plan did not load ({}); building it again", loaded.status().to_string());
      (void)disk_->erase(disk_key);
      count([](DnnPlanStats& s) { ++s.disk_rejected; });
    }
  }
  const auto start = std::chrono::steady_clock::now();
  ACCEL_ASSIGN_OR_RETURN(BuiltPlan built, build_plan(*described, handle));
  const std::uint64_t micros = micros_since(start);
  count([&](DnnPlanStats& s) {
    ++s.builds;
    s.build_micros += micros;
    if (built.serialized.empty()) ++s.not_serializable;
  });
  if (disk_ && !built.serialized.empty()) {
    if (Status stored = disk_->store(disk_key, disk_value(engine_name(*built.plan), built.serialized)); stored.ok()) {
      count([](DnnPlanStats& s) { ++s.disk_stores; });
    } else {
      spdlog::warn("accel: a cuDNN plan was not persisted: {}", stored.to_string());
    }
  }
  return std::make_shared<const PlannedGraph>(std::move(described), std::move(built.plan));
}

DnnPlanStats DnnPlans::stats() const {
  std::lock_guard lock(stats_mutex_);
  DnnPlanStats stats = stats_;
  stats.memory = memory_.stats();
  if (disk_) {
    stats.disk_rejected += disk_->stats().corrupt_entries;
  }
  return stats;
}

}  // namespace accel::dnn::cudnn

#include "cli/json_output.hpp"

#include <fmt/format.h>

#include <string>

namespace accel::cli {

nlohmann::json cache_json(const CacheStats& c) {
  return {{"name", c.name},
          {"directory", c.directory},
          {"hits", c.hits},
          {"misses", c.misses},
          {"evictions", c.evictions},
          {"entries", c.entries},
          {"capacity", c.capacity},
          {"bytes", c.bytes},
          {"capacity_bytes", c.capacity_bytes},
          {"builds", c.builds},
          {"build_failures", c.build_failures},
          {"build_micros", c.build_micros},
          {"disk_loads", c.disk_loads},
          {"load_micros", c.load_micros},
          {"disk_stores", c.disk_stores},
          {"disk_skips", c.disk_skips},
          {"disk_rejects", c.disk_rejects},
          {"other_process_builds", c.other_process_builds},
          {"not_ready", c.not_ready}};
}

nlohmann::json device_json(const DeviceInfo& info) {
  nlohmann::json libraries = nlohmann::json::object();
  for (const LibraryVersion& library : info.libraries) libraries[library.name] = library.version;
  nlohmann::json caches = nlohmann::json::array();
  for (const CacheStats& cache : info.caches) caches.push_back(cache_json(cache));
  nlohmann::json out = {{"kind", std::string(to_string(info.kind))},
                        {"ordinal", info.ordinal},
                        {"name", info.name},
                        {"memory_capacity_bytes", info.memory_capacity_bytes},
                        {"libraries", std::move(libraries)},
                        {"caches", std::move(caches)}};
  if (info.kind != DeviceKind::cpu) {
    out["compute_capability"] = fmt::format("{}.{}", info.compute_capability / 10, info.compute_capability % 10);
    out["completion"] = std::string(to_string(info.completion));
  }
  return out;
}

void print_json(const nlohmann::json& value) { fmt::print("{}\n", value.dump(2)); }

}  // namespace accel::cli

// The JSON that `accel info --json` and `accel cache list --json` print, one helper so both name things alike.
#pragma once

#include <nlohmann/json.hpp>

#include "accel/device/requests.hpp"

namespace accel::cli {

// Every counter of the cache, by its field name.
[[nodiscard]] nlohmann::json cache_json(const CacheStats& cache);
// The device: kind, name, memory, compute capability (CUDA), libraries by name and caches.
[[nodiscard]] nlohmann::json device_json(const DeviceInfo& info);
// `value`, indented, and a newline on stdout.
void print_json(const nlohmann::json& value);

}  // namespace accel::cli

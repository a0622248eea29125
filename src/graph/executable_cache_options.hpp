// The options of an executable cache, the CPU's or a CUDA stream's: "graph-executables", bounded by entries and by
// arena bytes, with a disk tier holding each executable's plan (ExecutablePlan::encode) under a key prefix that
// names what executables depend on beyond their graph and binding (device, library versions).
#pragma once

#include <algorithm>
#include <string>

#include "accel/graph/options.hpp"
#include "cache/cache.hpp"

namespace accel::graph {

// 2: graph encoding 3 (rope, GQA, causal); 3: 4 (window); 4: 6 (rope's packed and normalised forms, gated)
inline constexpr std::uint32_t kExecutableDiskFormat = 4;

template <class Executable>
cache::CacheOptions<Executable> executable_cache_options(const std::string& prefix, const Options& options) {
  const auto* bytes = reinterpret_cast<const std::byte*>(prefix.data());
  cache::CacheOptions<Executable> cache{
      .name = "graph-executables",
      .max_entries = std::max<std::size_t>(options.executable_capacity, 1),
      .max_bytes = options.executable_bytes,
      .size_of = [](const Executable& e) { return e.plan().arena_bytes(); },
      .disk_key_prefix = cache::Bytes(bytes, bytes + prefix.size()),
      .encode = [](const Executable& e) -> std::optional<cache::Bytes> { return e.plan().encode(); },
  };
  if (!options.persistent) return cache;
  const std::filesystem::path directory = options.directory.empty()
                                              ? cache::DiskStore::default_directory("graph-executables")
                                              : std::filesystem::path(options.directory);
  cache.disk = cache::DiskStore::open_or_warn(
      {.directory = directory, .max_bytes = options.directory_bytes, .format_version = kExecutableDiskFormat},
      "graph executables");
  return cache;
}

}  // namespace accel::graph

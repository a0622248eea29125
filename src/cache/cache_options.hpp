// The options of a cache::Cache (cache/cache.hpp): its bounds, its persistent tier, its background builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accel/core/result.hpp"
#include "cache/build_pool.hpp"
#include "cache/disk_store.hpp"

namespace accel::cache {

using Bytes = std::vector<std::byte>;

// What a build may return instead of the bare value: the value with its disk encoding, for builds that have the
// encoding anyway (cuDNN serialises a plan while building it), so that CacheOptions::encode need not keep it.
template <class Value>
struct Built {
  std::shared_ptr<const Value> value;
  std::optional<Bytes> encoded;  // none: CacheOptions::encode, if any, makes it
};

template <class Value>
struct CacheOptions {
  std::string name;                                    // CacheStats::name
  std::size_t max_entries = 0;                         // 0: no bound on entries
  std::uint64_t max_bytes = 0;                         // 0: no bound on bytes
  std::function<std::uint64_t(const Value&)> size_of;  // none: values count 0 bytes

  // The persistent tier; none when null. Disk keys are disk_key_prefix followed by the key (the prefix names
  // what an entry depends on beyond the key: formats, library versions, the GPU).
  std::unique_ptr<DiskStore> disk;
  Bytes disk_key_prefix;
  std::function<std::optional<Bytes>(const Value&)> encode;  // none, or nullopt: the value stays in memory only
  // How an entry becomes a value, for requests that give none of their own. An error rejects the entry.
  std::function<Result<std::shared_ptr<const Value>>(std::span<const std::byte>)> decode;
  bool lock_across_processes = false;  // needs a disk tier

  std::unique_ptr<BuildPool> pool;  // background builds; none: get_async() builds on the calling thread
};

}  // namespace accel::cache

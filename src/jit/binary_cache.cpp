#include "jit/binary_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "cache/disk_store.hpp"

namespace accel::jit {

Result<std::unique_ptr<BinaryCache>> BinaryCache::open(BinaryCacheOptions options) {
  if (options.compile_threads <= 0) {
    return invalid_argument(
        fmt::format("binary cache: compile_threads is {}, needs at least 1", options.compile_threads));
  }
  cache::CacheOptions<BinaryBytes> cache{
      .name = std::move(options.name),
      .max_entries = std::max<std::size_t>(options.memory_capacity, 1),
      .encode = [](const BinaryBytes& binary) -> std::optional<cache::Bytes> { return binary; },
      .decode = [](std::span<const std::byte> stored) -> Result<BinaryPtr> {
        return std::make_shared<const BinaryBytes>(stored.begin(), stored.end());
      },
      .lock_across_processes = true};
  // A directory that cannot be used (refused, read-only, full) costs compile time, not the cache: failing here
  // would fail every JIT request of the context, since its state is opened again per request until it opens.
  if (options.persistent) {
    cache.disk = cache::DiskStore::open_or_warn(
        {.directory =
             options.directory.empty() ? cache::DiskStore::default_directory(options.component) : options.directory,
         .max_bytes = options.max_bytes,
         .format_version = options.format_version},
        "JIT binaries (" + cache.name + ")");
  }
  ACCEL_ASSIGN_OR_RETURN(cache.pool, cache::BuildPool::start(options.compile_threads));
  return std::unique_ptr<BinaryCache>(new BinaryCache(std::move(cache)));
}

}  // namespace accel::jit

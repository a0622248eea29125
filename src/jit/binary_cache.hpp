// accel::jit::BinaryCache — compiled binaries (NVRTC cubins, nvcc-built CUTLASS modules) by the full identity of
// what produced them: an in-memory LRU in front of a persistent DiskStore, with compiles run on background
// threads and deduplicated, so that each key is compiled once in this process however many callers miss it at
// once, and a process that starts later loads the binary from disk instead of compiling it again.
//
// A key is the bytes of everything that changes the binary (source, header contents or versions, options,
// arch, compiler version); keys are compared byte for byte, never by hash alone. Across processes sharing the
// directory, a compile holds the key's cache::KeyLock, so a second process waits for the first one's result
// instead of compiling the same key. The disk only saves compile time: errors reading or writing it make get()
// compile (or keep the binary in memory only), never fail; find() reports them.
//
// All of this is the cache component's (cache/cache.hpp); this class fixes its value (the binary's bytes, stored
// on disk as they are) and its threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accel/core/cache_stats.hpp"
#include "accel/core/result.hpp"
#include "cache/cache.hpp"

namespace accel::jit {

using BinaryBytes = std::vector<std::byte>;
using BinaryPtr = std::shared_ptr<const BinaryBytes>;
using CompileFunction = std::function<Result<BinaryBytes>()>;

struct BinaryCacheOptions {
  std::size_t memory_capacity = 256;  // binaries kept in memory (LRU)
  bool persistent = true;             // false: memory only
  std::filesystem::path directory;    // empty: cache::DiskStore::default_directory(component)
  std::string component = "kernels";
  std::uint64_t max_bytes = 1ull << 30;
  std::uint32_t format_version = 1;
  int compile_threads = 2;            // background compiles at once
  std::string name = "jit-binaries";  // CacheStats::name
};

class BinaryCache {
 public:
  // Opens (creates) the persistent tier unless options.persistent is false; starts the compile threads. A
  // directory that cannot be used (DiskStore::open refused it) leaves the cache in memory only, with a warning.
  static Result<std::unique_ptr<BinaryCache>> open(BinaryCacheOptions options);
  // Waits for running compiles; pending ones, and those waiting for another process's lock, are answered
  // `cancelled`.
  ~BinaryCache() = default;
  BinaryCache(const BinaryCache&) = delete;
  BinaryCache& operator=(const BinaryCache&) = delete;

  // Memory, then disk (a disk hit is kept in memory). Never compiles. nullopt on a miss.
  [[nodiscard]] Result<std::optional<BinaryPtr>> find(std::span<const std::byte> key) { return cache_.find(key); }

  // The binary of `key`: found, or compiled by `compile` on a background thread. One compile per key at a
  // time: callers that miss a key already being compiled share that compile's result. A failed compile is not
  // cached (the next request tries again) and everyone who waited gets its error.
  [[nodiscard]] std::shared_future<Result<BinaryPtr>> get_async(std::span<const std::byte> key,
                                                                CompileFunction compile) {
    return cache_.get_async(key, std::move(compile));
  }

  // The binary if it is ready; otherwise starts (or joins) its compile and answers nullopt.
  [[nodiscard]] std::optional<Result<BinaryPtr>> get_if_ready(std::span<const std::byte> key, CompileFunction compile) {
    return cache_.get_if_ready(key, std::move(compile));
  }

  // get_async(...).get().
  [[nodiscard]] Result<BinaryPtr> get(std::span<const std::byte> key, CompileFunction compile) {
    return get_async(key, std::move(compile)).get();
  }

  // True while a compile of `key` is queued or running in this process.
  [[nodiscard]] bool compiling(std::span<const std::byte> key) const { return cache_.building(key); }

  // builds are compiles; hits include requests joined to a compile already queued or running.
  [[nodiscard]] CacheStats stats() const { return cache_.stats(); }
  // The persistent tier's directory; empty when the cache is memory only.
  [[nodiscard]] std::filesystem::path directory() const { return cache_.directory(); }

 private:
  explicit BinaryCache(cache::CacheOptions<BinaryBytes> options) : cache_(std::move(options)) {}

  cache::Cache<BinaryBytes> cache_;
};

}  // namespace accel::jit

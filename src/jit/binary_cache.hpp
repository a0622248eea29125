// accel::jit::BinaryCache — compiled binaries (NVRTC cubins, nvcc-built CUTLASS modules) by the full identity of
// what produced them: an in-memory LRU in front of a persistent DiskStore, with compiles run on background
// threads and deduplicated, so that each key is compiled once in this process however many callers miss it at
// once, and a process that starts later loads the binary from disk instead of compiling it again.
//
// A key is the bytes of everything that changes the binary (source, header contents or versions, options,
// arch, compiler version); keys are compared byte for byte, never by hash alone. Across processes sharing the
// directory, a compile holds an advisory lock (flock) on the key's lock file "<XXH3-64 of the key, 16 hex
// digits>.lock" in the directory, so a second process waits for the first one's result instead of compiling the
// same key; the holder removes the file when done. The disk only saves compile time: errors reading or writing
// it make get() compile (or keep the binary in memory only), never fail; find() reports them.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/device/requests.hpp"

namespace accel::cache {
class DiskStore;
}  // namespace accel::cache

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
  int compile_threads = 2;  // background compiles at once
};

// COUNTs since the cache was opened; memory.entries/capacity now.
struct BinaryCacheStats {
  // hits: requests answered from memory or joined to a compile of the key already queued or running; misses:
  // requests that went on to the disk (and to a compile when the disk has no entry).
  PlanCacheStats memory;
  std::uint64_t compiles = 0;  // compile functions run
  std::uint64_t compile_failures = 0;
  std::uint64_t compile_micros = 0;  // SUM of their wall time
  std::uint64_t disk_loads = 0;      // binaries read from the persistent tier instead of compiled
  std::uint64_t disk_stores = 0;
  std::uint64_t disk_rejected = 0;  // damaged entries found (removed, then compiled again)
  // Compiles skipped because another process stored the key while this one waited for its lock (a subset of
  // disk_loads).
  std::uint64_t waits_for_other_process = 0;
};

class BinaryCache {
 public:
  // Opens (creates) the persistent tier unless options.persistent is false; starts the compile threads.
  static Result<std::unique_ptr<BinaryCache>> open(BinaryCacheOptions options);
  // Waits for running compiles; pending ones, and those waiting for another process's lock, are answered
  // `cancelled`.
  ~BinaryCache();
  BinaryCache(const BinaryCache&) = delete;
  BinaryCache& operator=(const BinaryCache&) = delete;

  // Memory, then disk (a disk hit is kept in memory). Never compiles. nullopt on a miss.
  [[nodiscard]] Result<std::optional<BinaryPtr>> find(std::span<const std::byte> key);

  // The binary of `key`: found, or compiled by `compile` on a background thread. One compile per key at a
  // time: callers that miss a key already being compiled share that compile's result. A failed compile is not
  // cached (the next request tries again) and everyone who waited gets its error.
  [[nodiscard]] std::shared_future<Result<BinaryPtr>> get_async(std::span<const std::byte> key,
                                                                CompileFunction compile);

  // get_async(...).get().
  [[nodiscard]] Result<BinaryPtr> get(std::span<const std::byte> key, CompileFunction compile);

  // True while a compile of `key` is queued or running in this process.
  [[nodiscard]] bool compiling(std::span<const std::byte> key) const;

  [[nodiscard]] BinaryCacheStats stats() const;
  // The persistent tier's directory; empty when the cache is memory only.
  [[nodiscard]] const std::filesystem::path& directory() const noexcept;

 private:
  struct Job;
  struct Entry {
    std::string id;
    BinaryPtr binary;
  };
  class KeyLock;

  BinaryCache(BinaryCacheOptions options, std::unique_ptr<cache::DiskStore> disk);

  void work();
  Result<BinaryPtr> produce(const Job& job);
  Result<BinaryPtr> compile(const Job& job);
  std::optional<BinaryPtr> load_from_disk(std::span<const std::byte> key);
  Result<KeyLock> lock_key(std::span<const std::byte> key);
  std::optional<BinaryPtr> find_in_memory(const std::string& id);  // mutex_ held
  void remember(std::string id, BinaryPtr binary);                 // mutex_ held

  const BinaryCacheOptions options_;
  const std::unique_ptr<cache::DiskStore> disk_;  // null when memory only
  const std::filesystem::path directory_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_;  // a job queued, or stopping_
  bool stopping_ = false;
  std::list<Entry> recent_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  std::unordered_map<std::string, std::shared_ptr<Job>> jobs_;  // queued or running, by key
  std::deque<std::shared_ptr<Job>> queue_;
  BinaryCacheStats stats_;
  std::vector<std::thread> threads_;
};

}  // namespace accel::jit

/// @file
/// accel::CacheStats — what one cache reports: every cache of a device (cuBLASLt plans, cuDNN plans, JIT binaries,
/// loaded JIT modules) fills the same struct, so a device's report and its wire encoding stay the same when a
/// library family adds a cache.
#pragma once

#include <cstdint>
#include <string>

namespace accel {

/// Every counter is labelled COUNT (events since the cache was made) or SUM (a total now, or a sum of times).
struct CacheStats {
  std::string name;       ///< e.g. "cublaslt-plans", "cudnn-plans", "jit-binaries", "jit-programs", "jit-modules"
  std::string directory;  ///< the persistent tier's directory (defaults resolved); empty when there is none

  std::uint64_t hits = 0;            ///< COUNT: requests answered from memory or joined to a build under way
  std::uint64_t misses = 0;          ///< COUNT: requests that went on to the disk tier or a build
  std::uint64_t evictions = 0;       ///< COUNT: values dropped from memory to keep within the bounds
  std::uint64_t entries = 0;         ///< SUM: values in memory now
  std::uint64_t capacity = 0;        ///< SUM: the bound on entries (0: none)
  std::uint64_t bytes = 0;           ///< SUM: the sizes of the values in memory now (0 when the cache has no size)
  std::uint64_t capacity_bytes = 0;  ///< SUM: the bound on bytes (0: none)
  std::uint64_t builds = 0;          ///< COUNT: builds run (compiles, plan builds, module loads)
  std::uint64_t build_failures = 0;  ///< COUNT: builds that failed or threw (a subset of builds)
  std::uint64_t build_micros = 0;    ///< SUM: host time of the builds
  std::uint64_t disk_loads = 0;      ///< COUNT: values read from the persistent tier instead of built
  std::uint64_t load_micros = 0;     ///< SUM: host time of those loads (read and decode)
  std::uint64_t disk_stores = 0;     ///< COUNT: built values written to the persistent tier
  std::uint64_t disk_skips = 0;      ///< COUNT: built values not written (no encoding of them, or the store failed)
  std::uint64_t disk_rejects = 0;    ///< COUNT: entries found damaged or undecodable (erased, then built again)
  /// COUNT: builds skipped because another process stored the key while this one waited for the key's lock (a
  /// subset of disk_loads).
  std::uint64_t other_process_builds = 0;
  /// COUNT: "if ready" requests answered "not yet" (a background build was started or joined instead).
  std::uint64_t not_ready = 0;
};

}  // namespace accel

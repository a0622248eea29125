// accel::cache::DiskStore — a persistent cache of byte strings in one directory, shared by threads and
// processes, so that a later process skips work an earlier one did (cuDNN execution plans, JIT kernels).
//
// Each entry is one file, named by the XXH3-128 hash of its key, written under a temporary name and renamed over
// the final one, so a reader finds the old entry, the new one or none, never a partial file. Nothing read back
// is trusted: the stored key must equal the asked key byte for byte (a hash collision is a miss, never a wrong
// value), and the lengths and the checksum must match, else the file is removed and the load is a miss.
//
// Writes are not fsync'ed: a crash can only lose or damage entries, and damage is caught on load, so a flush
// per store would buy durability a cache does not need.
//
// Entry file "<XXH3-128 of the key, canonical form, 32 hex digits>.entry", integers little-endian:
//    0  8 bytes  magic "ACCELDS\0" (a change of this layout must change the magic)
//    8  u32      format_version of the writer (DiskStoreOptions::format_version)
//   12  u32      key length
//   16  u64      value length
//   24  u64      XXH3-64 (seed 0) of the key followed by the value
//   32           the key, then the value
// An authenticated store (DiskStoreOptions::authentication_key) writes the magic "ACCELDA\0" instead, and puts
// between the header and the key the 32-byte HMAC-SHA256, under the authentication key, of the header, the key
// and the value (cache/directory_trust.hpp says what each kind of store trusts).
// Files being written are named "tmp-<pid>-<counter>-<random>"; other names in the directory are left alone.
//
// Size bound: the store keeps an estimate of the directory's size, the size its last scan found plus what it has
// stored since (overwrites and erases are not subtracted, so the estimate errs high and is only checked early).
// Only when the estimate passes max_bytes does it scan the directory and remove the least recently used entries
// (oldest modification time first; a hit refreshes it) until at most 7/8 of max_bytes remain, so a full cache
// scans once per max_bytes/8 stored rather than on every store. Processes keep their own estimates, so together
// they may overshoot the bound until one of them scans.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accel/core/result.hpp"
#include "cache/directory_trust.hpp"

namespace accel::cache {

struct DiskStoreOptions {
  std::filesystem::path directory;         // created if missing
  std::uint64_t max_bytes = 512ull << 20;  // bound on the entry files' sizes (headers included)
  // Part of every entry, for what the caller's values mean (a plan's serialization, a kernel's ABI): an entry
  // of another version is a miss and is removed, so the next store of its key writes this version.
  std::uint32_t format_version = 1;
  // Empty: the key in the file named by $ACCEL_CACHE_KEY_FILE, if that is set; else none, and the store is
  // private (its directory and entries must be this user's and writable by nobody else). With a key the store is
  // shared: its directory may be group-writable, and it loads only entries tagged with this key
  // (cache/directory_trust.hpp).
  std::vector<std::byte> authentication_key;
};

// Counts since this DiskStore was opened, for this object only (not other processes sharing the directory).
struct DiskStoreStats {
  std::uint64_t hits = 0;             // loads that returned a value
  std::uint64_t misses = 0;           // loads that returned none, for whatever reason (corrupt ones included)
  std::uint64_t stores = 0;           // entries written
  std::uint64_t evictions = 0;        // entries this object removed to keep within max_bytes
  std::uint64_t corrupt_entries = 0;  // loads that found a damaged entry (and removed it); a subset of misses
  // Loads that found an entry this store may not trust (not a regular file, not this user's or writable by others
  // in a private store, without a valid tag in an authenticated one) and did not read it; a subset of misses.
  std::uint64_t refused_entries = 0;
  std::uint64_t failed_stores = 0;  // stores that wrote nothing (a full or read-only disk, a removed directory)
};

// One entry file of a cache directory as DiskStore::scan judged it.
struct ScannedEntry {
  std::filesystem::path path;
  std::uint64_t bytes = 0;
  std::string problem;  // empty: load() would read it; else why load() would refuse or remove it
};

class DiskStore {
 public:
  // Creates the directory if missing (mode 0700, and the same for each parent it creates) and scans it once (for
  // the size estimate, and to remove temporary files that writers left behind when they died).
  //
  // A directory this process may not trust is refused with failed_precondition naming it, its owner and mode,
  // and what to do: one not owned by this user or writable by its group or others (writable by others when the
  // store has an authentication key). So is a key file ($ACCEL_CACHE_KEY_FILE) that others may read.
  //
  // Errors from the OS name the directory and errno's text, carry Source::os and errno, and take their code from
  // errno, since that is what decides whether a retry can help: no space or quota -> resource_exhausted;
  // permissions, a read-only file system, a file in the way -> failed_precondition; anything else -> unavailable.
  static Result<std::unique_ptr<DiskStore>> open(DiskStoreOptions options);

  // open() for a cache that goes on without its disk tier: null when open() failed, after a warning naming `what`
  // and why, said once per directory in this process (each stream or context opening it would say it again).
  static std::unique_ptr<DiskStore> open_or_warn(DiskStoreOptions options, std::string_view what);

  // $ACCEL_CACHE_DIR/<component> if set, else $XDG_CACHE_HOME/accel/<component> (when absolute, as the XDG spec
  // requires), else <home>/.cache/accel/<component> with the home from $HOME or the password database. Empty
  // when there is no home either; open() refuses an empty directory.
  static std::filesystem::path default_directory(std::string_view component);

  // Each entry file of the directory (sorted by name), checked as load() checks it — the directory's trust, the
  // file's type, owner and mode, its header, lengths and checksum, its tag in an authenticated store — without
  // changing anything. Two checks need the asked key and the cache's format version and are not made: a scan
  // accepts any stored key and version. A missing directory has no entries; a refused one is an error, as in open().
  static Result<std::vector<ScannedEntry>> scan(DiskStoreOptions options);
  // Removes the entry files and temporary files of the directory (only names this store writes; other files stay)
  // after open()'s trust check of the directory, and says how many. A missing directory has none.
  static Result<std::uint64_t> clear(DiskStoreOptions options);

  DiskStore(const DiskStore&) = delete;
  DiskStore& operator=(const DiskStore&) = delete;

  // `key` is the value's full identity (everything the value depends on). A hit refreshes the entry's
  // modification time, which is what eviction orders by. Errors are the OS's (unreadable file); a damaged,
  // foreign or refused entry is a miss, not an error.
  Result<std::optional<std::vector<std::byte>>> load(std::span<const std::byte> key);
  // Replaces any entry of `key`. An entry larger than max_bytes is refused with invalid_argument: it could
  // never be kept. The first failure of a store is logged (a full or read-only disk makes every later one fail
  // too); the others are counted in failed_stores.
  Status store(std::span<const std::byte> key, std::span<const std::byte> value);
  // For a caller that found a loaded value unusable. An absent entry is not an error.
  Status erase(std::span<const std::byte> key);

  // Where the entry of `key` lives, whether or not it exists (for tests and for people inspecting a cache).
  [[nodiscard]] std::filesystem::path entry_path(std::span<const std::byte> key) const;
  [[nodiscard]] DiskStoreStats stats() const;
  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return options_.directory; }

 private:
  DiskStore(DiskStoreOptions options, DirectoryTrust trust) : options_(std::move(options)), trust_(std::move(trust)) {}

  Status write_entry(std::span<const std::byte> key, std::span<const std::byte> value);
  Status scan_and_evict();
  template <class Change>
  void count(Change change) {
    std::lock_guard lock(stats_mutex_);
    change(stats_);
  }

  const DiskStoreOptions options_;
  const DirectoryTrust trust_;
  std::atomic<std::uint64_t> estimated_bytes_{0};
  std::atomic<bool> store_failure_logged_{false};
  std::mutex scan_mutex_;  // one scan at a time; a store that finds one running leaves the work to it
  mutable std::mutex stats_mutex_;
  DiskStoreStats stats_;
};

}  // namespace accel::cache

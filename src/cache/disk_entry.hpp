// What DiskStore's load() and its maintenance (disk_store_scan.cpp: scan, clear) share of an entry file: how one is
// read and judged, which file names are entries or temporaries, and the trust a store's options name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"
#include "cache/directory_trust.hpp"
#include "cache/disk_store.hpp"

namespace accel::cache {

// `refused`: not vouched for (an authenticated store's entry without a valid tag), so nothing it says is acted on.
enum class Verdict { hit, other_key, other_version, damaged, refused };
struct Reading {
  Verdict verdict = Verdict::damaged;
  std::vector<std::byte> value;
};

// Reads and checks the entry open as `fd` (`file_bytes` long) against the asked key; without one (a scan), any
// stored key and format version pass. Only read errors are errors: whatever the bytes say is a verdict. An
// authenticated store checks the tag before anything else, so that an entry it cannot vouch for decides nothing (not
// even its own removal).
Result<Reading> read_entry(int fd, std::uint64_t file_bytes, std::optional<std::span<const std::byte>> key,
                           std::uint32_t format_version, const DirectoryTrust& trust,
                           const std::filesystem::path& path);

bool is_entry_name(std::string_view name);
bool is_temp_name(std::string_view name);

// The trust of the store `options` describe: its key, else $ACCEL_CACHE_KEY_FILE's; the key leaves `options`.
Result<DirectoryTrust> trust_of(DiskStoreOptions& options);

}  // namespace accel::cache

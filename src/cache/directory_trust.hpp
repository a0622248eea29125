// accel::cache::DirectoryTrust — what a DiskStore accepts of its directory and of the entry files in it. Cached
// values are code this process runs (CUTLASS modules are dlopen'ed, NVRTC binaries and cuDNN plans are loaded
// into the GPU context), so a file another local user could have written must never be loaded; checksums catch
// damage, not forgery.
//
// Private (no authentication key), as ssh wants of ~/.ssh: the directory and every entry file must be owned by
// this process's effective user and writable by nobody else (no group or other write bit).
//
// Shared (an authentication key, which only the team can read): the directory may belong to anyone and be
// writable by its group (not by others), and an entry may be written by any member, so its owner is not checked;
// instead every entry carries an HMAC-SHA256 under the key, and one whose tag does not verify is refused.
//
// Either way an entry must be a regular file: it is opened with O_NOFOLLOW and judged by fstat of the opened
// descriptor, so the file that was checked is the file that is read.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <array>
#include <cstddef>
#include <filesystem>
#include <span>
#include <vector>

#include "accel/core/result.hpp"

namespace accel::cache {

class DirectoryTrust {
 public:
  static constexpr std::size_t kTagBytes = 32;
  static constexpr std::size_t kMinKeyBytes = 16;
  using Tag = std::array<std::byte, kTagBytes>;

  // The key in the file named by $ACCEL_CACHE_KEY_FILE; empty when that is unset or empty.
  static Result<std::vector<std::byte>> key_from_environment();
  // The file's bytes without trailing white space (so that `openssl rand -hex 32 > file` makes a key). The file
  // must be a regular file that neither its group may write nor others read or write (0600, 0640 or 0440), and
  // hold at least kMinKeyBytes.
  static Result<std::vector<std::byte>> read_key_file(const std::filesystem::path& path);

  // An empty key: private.
  explicit DirectoryTrust(std::vector<std::byte> key);

  [[nodiscard]] bool authenticated() const noexcept { return !key_.empty(); }

  // Refuses (failed_precondition, naming the directory, its owner and mode, and what to do) a directory that this
  // process may not trust.
  [[nodiscard]] Status check_directory(const std::filesystem::path& directory) const;
  // Whether an entry file with this status may be read (its contents are checked apart).
  [[nodiscard]] bool accepts_entry(const struct stat& file) const noexcept;
  // Mode of the entry files this process writes: readable by the group only in a shared cache.
  [[nodiscard]] mode_t entry_mode() const noexcept { return authenticated() ? 0640 : 0600; }

  // HMAC-SHA256 under the key of the three parts in order; an error only if libcrypto fails.
  [[nodiscard]] Result<Tag> tag(std::span<const std::byte> header, std::span<const std::byte> key,
                                std::span<const std::byte> value) const;
  // Whether `stored` is the tag of the three parts, compared in constant time.
  [[nodiscard]] bool verify(const Tag& stored, std::span<const std::byte> header, std::span<const std::byte> key,
                            std::span<const std::byte> value) const;

 private:
  std::vector<std::byte> key_;
  uid_t user_;
};

}  // namespace accel::cache

// DiskStore's maintenance: scan() judges every entry file as load() would, clear() removes entries and temporaries.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "cache/disk_entry.hpp"
#include "cache/disk_store.hpp"
#include "cache/posix_file.hpp"

namespace accel::cache {
namespace {

namespace fs = std::filesystem;

// Why load() would not read an entry file with this status.
std::string refusal(const struct stat& file) {
  if (!S_ISREG(file.st_mode)) return "refused: not a regular file";
  return fmt::format(
      "refused: owned by uid {} with mode {:04o}; a private cache's entries must be this user's "
      "(uid {}) and writable by nobody else",
      file.st_uid, file.st_mode & 07777, ::geteuid());
}

// What scan() says of the entry file at `path`; an error only when the file cannot be read.
Result<ScannedEntry> scan_entry(const fs::path& path, const DirectoryTrust& trust) {
  ScannedEntry entry{.path = path};
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0) {
    const int error = errno;
    if (error != ELOOP) return os_error(path.parent_path(), "could not open " + path.filename().native(), error);
    entry.problem = "refused: a symbolic link (never followed)";
    return entry;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    const int error = errno;
    return os_error(path.parent_path(), "could not stat " + path.filename().native(), error);
  }
  entry.bytes = static_cast<std::uint64_t>(st.st_size);
  if (!trust.accepts_entry(st)) {
    entry.problem = refusal(st);
    return entry;
  }
  ACCEL_ASSIGN_OR_RETURN(const Reading reading, read_entry(fd.get(), entry.bytes, std::nullopt, 0, trust, path));
  if (reading.verdict == Verdict::damaged) entry.problem = "damaged: its header, lengths or checksum do not match";
  if (reading.verdict == Verdict::refused) entry.problem = "refused: no valid tag under this cache's key";
  return entry;
}

}  // namespace

Result<std::vector<ScannedEntry>> DiskStore::scan(DiskStoreOptions options) {
  ACCEL_ASSIGN_OR_RETURN(const DirectoryTrust trust, trust_of(options));
  std::vector<ScannedEntry> entries;
  if (!fs::exists(options.directory)) return entries;
  ACCEL_RETURN_IF_ERROR(trust.check_directory(options.directory));
  std::error_code error;
  for (fs::directory_iterator it(options.directory, error), end; !error && it != end; it.increment(error)) {
    if (!is_entry_name(it->path().filename().native())) continue;
    Result<ScannedEntry> entry = scan_entry(it->path(), trust);
    // A file gone by now was evicted or replaced by another process.
    if (!entry.ok() && entry.status().raw_code() == ENOENT) continue;
    ACCEL_RETURN_IF_ERROR(entry.status());
    entries.push_back(std::move(*entry));
  }
  if (error) return os_error(options.directory, "could not list the directory", error.value());
  std::ranges::sort(entries, {}, &ScannedEntry::path);
  return entries;
}

Result<std::uint64_t> DiskStore::clear(DiskStoreOptions options) {
  ACCEL_ASSIGN_OR_RETURN(const DirectoryTrust trust, trust_of(options));
  if (!fs::exists(options.directory)) return 0;
  ACCEL_RETURN_IF_ERROR(trust.check_directory(options.directory));
  std::uint64_t removed = 0;
  std::error_code error;
  for (fs::directory_iterator it(options.directory, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().native();
    if (!is_entry_name(name) && !is_temp_name(name)) continue;
    if (::unlink(it->path().c_str()) == 0) {
      ++removed;
    } else if (errno != ENOENT) {
      return os_error(options.directory, "could not remove " + name, errno);
    }
  }
  if (error) return os_error(options.directory, "could not list the directory", error.value());
  return removed;
}

}  // namespace accel::cache

// The POSIX file work of the disk tier: errors from errno, an owned descriptor, and reads and writes that finish
// what they start (EINTR, short transfers).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <span>
#include <string_view>

#include "accel/core/status.hpp"

namespace accel::cache {

// Whether retrying can help is what the code says, so it follows from errno rather than from the operation: no
// space or quota -> resource_exhausted; permissions, a read-only file system, a file in the way ->
// failed_precondition; anything else -> unavailable.
[[nodiscard]] Code code_for(int error);
// "disk cache <directory>: <what>: <strerror>", with Source::os and errno.
[[nodiscard]] Status os_error(const std::filesystem::path& directory, std::string_view what, int error);

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();
  [[nodiscard]] int get() const noexcept { return fd_; }
  // Closing is where some file systems (NFS) report a failed write, so a writer must see its result.
  int close() noexcept;

 private:
  int fd_;
};

// Bytes read, fewer than asked at the end of the file; -1 with errno on a read error.
[[nodiscard]] ssize_t read_at(int fd, std::span<std::byte> out, off_t offset);
// Whether all of `data` was written.
[[nodiscard]] bool write_all(int fd, std::span<const std::byte> data);

}  // namespace accel::cache

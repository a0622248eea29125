#include "cache/posix_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace accel::cache {

Code code_for(int error) {
  switch (error) {
    case ENOSPC:
    case EDQUOT: return Code::resource_exhausted;
    case EACCES:
    case EPERM:
    case EROFS:
    case ENOTDIR:
    case EEXIST: return Code::failed_precondition;
    default: return Code::unavailable;
  }
}

Status os_error(const std::filesystem::path& directory, std::string_view what, int error) {
  return Status(code_for(error), fmt::format("disk cache {}: {}: {}", directory.native(), what, std::strerror(error)),
                Source::os, error);
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

int FileDescriptor::close() noexcept { return ::close(std::exchange(fd_, -1)); }

ssize_t read_at(int fd, std::span<std::byte> out, off_t offset) {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, offset + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

bool write_all(int fd, std::span<const std::byte> data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace accel::cache

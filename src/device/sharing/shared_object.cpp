#include "device/sharing/shared_object.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace accel::device::sharing {
namespace {

Status os_error(std::string_view what, const std::string& name, int error) {
  // A name that is gone names memory that is gone: the handle that led here is stale.
  const Code code = error == ENOENT   ? Code::stale_handle
                    : error == EEXIST ? Code::failed_precondition
                                      : Code::unavailable;
  return Status(code, fmt::format("{} of the shared memory object {}: {}", what, name, std::strerror(error)),
                Source::os, error);
}

Result<void*> map(int fd, std::size_t bytes, const std::string& name) {
  void* data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) return os_error("mmap", name, errno);
  return data;
}

}  // namespace

Result<SharedObject> SharedObject::create(std::string name, std::size_t bytes) {
  if (!is_shared_object_name(name))
    return invalid_argument(fmt::format("'{}' is no shared object name of accel", name));
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return os_error("shm_open (create)", name, errno);
  Result<void*> data =
      ::ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? map(fd, bytes, name) : os_error("ftruncate", name, errno);
  ::close(fd);
  if (!data.ok()) {
    ::shm_unlink(name.c_str());
    return data.status();
  }
  return SharedObject(std::move(name), *data, bytes);
}

Result<SharedObject> SharedObject::open(std::string name, std::size_t min_bytes) {
  if (!is_shared_object_name(name))
    return invalid_argument(fmt::format("'{}' is no shared object name of accel", name));
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return os_error("shm_open", name, errno);
  struct stat status {};
  Result<void*> data = os_error("fstat", name, EINVAL);
  if (::fstat(fd, &status) != 0) {
    data = os_error("fstat", name, errno);
  } else if (status.st_size < 0 || static_cast<std::uint64_t>(status.st_size) < min_bytes || min_bytes == 0) {
    data = Status(Code::invalid_argument, fmt::format("the shared memory object {} holds {} bytes, not the {} expected",
                                                      name, status.st_size, min_bytes));
  } else {
    data = map(fd, min_bytes, name);
  }
  ::close(fd);
  if (!data.ok()) return data.status();
  return SharedObject(std::move(name), *data, min_bytes);
}

SharedObject::SharedObject(SharedObject&& other) noexcept
    : name_(std::move(other.name_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

SharedObject& SharedObject::operator=(SharedObject&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size_);
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SharedObject::~SharedObject() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

void SharedObject::unlink() const noexcept { ::shm_unlink(name_.c_str()); }

bool is_shared_object_name(std::string_view name) noexcept {
  constexpr std::string_view kPrefix = "/accel-";
  if (name.size() > kMaxNameBytes || !name.starts_with(kPrefix) || name.size() == kPrefix.size()) return false;
  for (const char c : name.substr(kPrefix.size()))
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

bool process_alive(int pid) noexcept { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace accel::device::sharing

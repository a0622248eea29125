#include "cache/key_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <utility>

namespace accel::cache {
namespace {

// How often a build waiting for another process's lock looks again (and asks whether its cache closes).
constexpr std::chrono::milliseconds kLockPoll{10};

}  // namespace

Result<KeyLock> KeyLock::acquire(const std::filesystem::path& directory, std::span<const std::byte> key,
                                 const std::function<bool()>& closing) {
  const std::filesystem::path path = directory / fmt::format("{:016x}.lock", XXH3_64bits(key.data(), key.size()));
  for (;;) {
    // A planted symbolic link must not make us create or lock a file elsewhere; without the lock we just build.
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return KeyLock();
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK) {
        ::close(fd);
        return KeyLock();
      }
      if (closing()) {
        ::close(fd);
        return cancelled("cache closed while waiting for another process's build of this key");
      }
      std::this_thread::sleep_for(kLockPoll);
    }
    struct stat held {};
    struct stat now {};
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      return KeyLock(fd, path);
    }
    // The previous holder removed this file after its build; the lock that counts is the file at the path now.
    ::close(fd);
  }
}

KeyLock::KeyLock(KeyLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

KeyLock::~KeyLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace accel::cache

// accel::cache::KeyLock — the advisory lock of one cache key across processes, so that processes sharing a
// persistent cache build each key once: the second waits for the first one's result instead of building again.
//
// The lock is flock on "<directory>/<XXH3-64 of the key, 16 hex digits>.lock" (DiskStore's scans only look at
// "*.entry" and "tmp-*" names). The holder removes the file before unlocking, so lock files do not pile up; a
// waiter that then wins the lock of a removed file sees that its file is no longer the one at the path and locks
// that one instead, which keeps one holder per path at a time.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>

#include "accel/core/result.hpp"

namespace accel::cache {

class KeyLock {
 public:
  // Waits for the lock of `key`, polling, so that a closing cache need not wait for another process's build:
  // `closing` is asked between polls, and a true answer is `cancelled`. A KeyLock that holds nothing means the
  // lock file could not be used; the build then goes ahead unlocked, since the lock only saves duplicate work.
  static Result<KeyLock> acquire(const std::filesystem::path& directory, std::span<const std::byte> key,
                                 const std::function<bool()>& closing);

  KeyLock() = default;
  KeyLock(KeyLock&& other) noexcept;
  KeyLock& operator=(KeyLock&&) = delete;
  ~KeyLock();

  [[nodiscard]] bool held() const noexcept { return fd_ >= 0; }

 private:
  KeyLock(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}

  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace accel::cache

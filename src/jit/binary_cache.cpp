#include "jit/binary_cache.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <exception>
#include <system_error>
#include <utility>

#include "cache/disk_store.hpp"
#include "core/elapsed.hpp"

namespace accel::jit {
namespace {

namespace fs = std::filesystem;

// How often a compile waiting for another process's lock looks again (and checks whether this cache closes).
constexpr std::chrono::milliseconds kLockPoll{10};

std::span<const std::byte> bytes_of(const std::string& id) { return std::as_bytes(std::span(id.data(), id.size())); }

std::shared_future<Result<BinaryPtr>> ready(Result<BinaryPtr> result) {
  std::promise<Result<BinaryPtr>> promise;
  promise.set_value(std::move(result));
  return promise.get_future().share();
}

}  // namespace

struct BinaryCache::Job {
  std::string id;  // the key's bytes
  CompileFunction compile;
  std::promise<Result<BinaryPtr>> promise;
  std::shared_future<Result<BinaryPtr>> future = promise.get_future().share();
};

// The advisory lock of one key across processes: flock on "<directory>/<XXH3-64 of the key, 16 hex digits>.lock"
// (DiskStore's scans only look at "*.entry" and "tmp-*" names). The holder removes the file before unlocking,
// so lock files do not pile up; a waiter that then wins the lock of a removed file sees that its file is no
// longer the one at the path and locks that one instead, which keeps one holder per path at a time.
// A KeyLock that holds nothing means the lock file could not be used; the compile then goes ahead unlocked,
// since the lock only saves duplicate work.
class BinaryCache::KeyLock {
 public:
  KeyLock() = default;
  KeyLock(int fd, fs::path path) : fd_(fd), path_(std::move(path)) {}
  KeyLock(KeyLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}
  KeyLock& operator=(KeyLock&&) = delete;
  ~KeyLock() {
    if (fd_ < 0) return;
    ::unlink(path_.c_str());
    ::close(fd_);
  }
  [[nodiscard]] bool held() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
  fs::path path_;
};

Result<std::unique_ptr<BinaryCache>> BinaryCache::open(BinaryCacheOptions options) {
  if (options.compile_threads <= 0) {
    return invalid_argument(
        fmt::format("binary cache: compile_threads is {}, needs at least 1", options.compile_threads));
  }
  std::unique_ptr<cache::DiskStore> disk;
  if (options.persistent) {
    ACCEL_ASSIGN_OR_RETURN(
        disk, cache::DiskStore::open({.directory = options.directory.empty()
                                                       ? cache::DiskStore::default_directory(options.component)
                                                       : options.directory,
                                      .max_bytes = options.max_bytes,
                                      .format_version = options.format_version}));
  }
  std::unique_ptr<BinaryCache> binary_cache(new BinaryCache(std::move(options), std::move(disk)));
  try {
    for (int i = 0; i < binary_cache->options_.compile_threads; ++i) {
      binary_cache->threads_.emplace_back([cache = binary_cache.get()] { cache->work(); });
    }
  } catch (const std::system_error& error) {
    // The destructor joins the threads that did start.
    return resource_exhausted(fmt::format("binary cache: could not start its compile threads: {}", error.what()));
  }
  return binary_cache;
}

BinaryCache::BinaryCache(BinaryCacheOptions options, std::unique_ptr<cache::DiskStore> disk)
    : options_(std::move(options)),
      disk_(std::move(disk)),
      directory_(disk_ != nullptr ? disk_->directory() : fs::path()) {}

BinaryCache::~BinaryCache() {
  std::deque<std::shared_ptr<Job>> abandoned;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    abandoned.swap(queue_);
    for (const std::shared_ptr<Job>& job : abandoned) jobs_.erase(job->id);
  }
  work_ready_.notify_all();
  for (const std::shared_ptr<Job>& job : abandoned) {
    job->promise.set_value(cancelled("binary cache closed before this compile started"));
  }
  for (std::thread& thread : threads_) thread.join();
}

Result<std::optional<BinaryPtr>> BinaryCache::find(std::span<const std::byte> key) {
  std::string id(reinterpret_cast<const char*>(key.data()), key.size());
  {
    std::lock_guard lock(mutex_);
    if (std::optional<BinaryPtr> found = find_in_memory(id)) return found;
    ++stats_.memory.misses;
  }
  if (disk_ == nullptr) return std::optional<BinaryPtr>();
  ACCEL_ASSIGN_OR_RETURN(std::optional<std::vector<std::byte>> loaded, disk_->load(key));
  if (!loaded) return std::optional<BinaryPtr>();
  BinaryPtr binary = std::make_shared<const BinaryBytes>(std::move(*loaded));
  std::lock_guard lock(mutex_);
  ++stats_.disk_loads;
  remember(std::move(id), binary);
  return std::optional<BinaryPtr>(std::move(binary));
}

std::shared_future<Result<BinaryPtr>> BinaryCache::get_async(std::span<const std::byte> key, CompileFunction compile) {
  std::string id(reinterpret_cast<const char*>(key.data()), key.size());
  std::shared_future<Result<BinaryPtr>> future;
  {
    std::lock_guard lock(mutex_);
    if (std::optional<BinaryPtr> found = find_in_memory(id)) return ready(std::move(*found));
    if (auto it = jobs_.find(id); it != jobs_.end()) {
      ++stats_.memory.hits;
      return it->second->future;
    }
    ++stats_.memory.misses;
    auto job = std::make_shared<Job>();
    job->id = id;
    job->compile = std::move(compile);
    future = job->future;
    jobs_.emplace(std::move(id), job);
    queue_.push_back(std::move(job));
  }
  work_ready_.notify_one();
  return future;
}

Result<BinaryPtr> BinaryCache::get(std::span<const std::byte> key, CompileFunction compile) {
  return get_async(key, std::move(compile)).get();
}

bool BinaryCache::compiling(std::span<const std::byte> key) const {
  const std::string id(reinterpret_cast<const char*>(key.data()), key.size());
  std::lock_guard lock(mutex_);
  return jobs_.contains(id);
}

BinaryCacheStats BinaryCache::stats() const {
  const std::uint64_t rejected = disk_ != nullptr ? disk_->stats().corrupt_entries : 0;
  std::lock_guard lock(mutex_);
  BinaryCacheStats stats = stats_;
  stats.memory.entries = index_.size();
  stats.memory.capacity = std::max<std::size_t>(options_.memory_capacity, 1);
  stats.disk_rejected = rejected;
  return stats;
}

const fs::path& BinaryCache::directory() const noexcept { return directory_; }

void BinaryCache::work() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      // Jobs still queued are the destructor's to answer.
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Result<BinaryPtr> result = produce(*job);
    {
      std::lock_guard lock(mutex_);
      jobs_.erase(job->id);
      // Both under one lock, so a request finds the key's job or its binary, never neither.
      if (result.ok()) remember(job->id, *result);
    }
    job->promise.set_value(std::move(result));
  }
}

Result<BinaryPtr> BinaryCache::produce(const Job& job) {
  if (disk_ == nullptr) return compile(job);
  const std::span<const std::byte> key = bytes_of(job.id);
  if (std::optional<BinaryPtr> found = load_from_disk(key)) return *found;
  ACCEL_ASSIGN_OR_RETURN(const KeyLock lock, lock_key(key));
  if (lock.held()) {
    // Another process may have compiled and stored the key while this one waited for the lock.
    if (std::optional<BinaryPtr> found = load_from_disk(key)) {
      std::lock_guard guard(mutex_);
      ++stats_.waits_for_other_process;
      return *found;
    }
  }
  Result<BinaryPtr> compiled = compile(job);
  // A binary the disk refuses (too large for max_bytes, a full disk) is still good for this process.
  if (compiled.ok() && disk_->store(key, **compiled).ok()) {
    std::lock_guard guard(mutex_);
    ++stats_.disk_stores;
  }
  return compiled;
}

Result<BinaryPtr> BinaryCache::compile(const Job& job) {
  const auto start = std::chrono::steady_clock::now();
  Result<BinaryBytes> compiled = internal_error("binary cache: the compile function threw");
  try {
    compiled = job.compile();
  } catch (const std::exception& error) {
    compiled = internal_error(fmt::format("binary cache: the compile function threw: {}", error.what()));
  } catch (...) {
  }
  const std::uint64_t micros = micros_since(start);
  std::lock_guard lock(mutex_);
  ++stats_.compiles;
  stats_.compile_micros += micros;
  if (!compiled.ok()) {
    ++stats_.compile_failures;
    return compiled.status();
  }
  return BinaryPtr(std::make_shared<const BinaryBytes>(std::move(*compiled)));
}

// Errors reading the disk are misses here: the persistent tier only saves compile time, and the compile that
// follows gives the caller a binary all the same. find() reports them.
std::optional<BinaryPtr> BinaryCache::load_from_disk(std::span<const std::byte> key) {
  Result<std::optional<std::vector<std::byte>>> loaded = disk_->load(key);
  if (!loaded.ok() || !loaded->has_value()) return std::nullopt;
  std::lock_guard lock(mutex_);
  ++stats_.disk_loads;
  return std::make_shared<const BinaryBytes>(std::move(**loaded));
}

Result<BinaryCache::KeyLock> BinaryCache::lock_key(std::span<const std::byte> key) {
  const fs::path path = directory_ / fmt::format("{:016x}.lock", XXH3_64bits(key.data(), key.size()));
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return KeyLock();
    // Polled rather than blocking, so that closing this cache need not wait for another process's compile.
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK) {
        ::close(fd);
        return KeyLock();
      }
      std::unique_lock lock(mutex_);
      if (work_ready_.wait_for(lock, kLockPoll, [&] { return stopping_; })) {
        ::close(fd);
        return cancelled("binary cache closed while waiting for another process's compile of this key");
      }
    }
    struct stat held {};
    struct stat now {};
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      return KeyLock(fd, path);
    }
    // The previous holder removed this file after its compile; the lock that counts is the file at the path now.
    ::close(fd);
  }
}

std::optional<BinaryPtr> BinaryCache::find_in_memory(const std::string& id) {
  auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  ++stats_.memory.hits;
  recent_.splice(recent_.begin(), recent_, it->second);
  return it->second->binary;
}

void BinaryCache::remember(std::string id, BinaryPtr binary) {
  if (auto it = index_.find(id); it != index_.end()) {
    it->second->binary = std::move(binary);
    recent_.splice(recent_.begin(), recent_, it->second);
    return;
  }
  recent_.push_front(Entry{id, std::move(binary)});
  index_.emplace(std::move(id), recent_.begin());
  while (index_.size() > std::max<std::size_t>(options_.memory_capacity, 1)) {
    index_.erase(recent_.back().id);
    recent_.pop_back();
    ++stats_.memory.evictions;
  }
}

}  // namespace accel::jit

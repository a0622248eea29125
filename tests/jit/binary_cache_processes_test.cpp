// The binary cache across processes: a key another process holds the lock of is waited for, then loaded from what
// its holder stored (or cancelled when the cache closes), and two processes missing one key at once compile it once.
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "cache/disk_store.hpp"
#include "jit/binary_cache.hpp"
#include "jit/binary_cache_testing.hpp"
#include "testing/scratch_directory.hpp"
#include "testing/status_matchers.hpp"

namespace accel::jit {
namespace {

namespace fs = std::filesystem;
using accel::testing::IsOk;
using accel::testing::ScratchDirectory;
using accel::testing::StatusIs;
using namespace accel::jit::binary_cache_testing;
using namespace std::chrono_literals;

fs::path lock_path(const fs::path& directory, std::span<const std::byte> key) {
  return directory / fmt::format("{:016x}.lock", XXH3_64bits(key.data(), key.size()));
}

// Whether process `pid` has `file` open: a build waiting for another process's lock of a key keeps the key's lock
// file open while it polls for the lock (KeyLock::acquire).
bool has_open(pid_t pid, const fs::path& file) {
  std::error_code error;
  for (fs::directory_iterator it(fs::path("/proc") / std::to_string(pid) / "fd", error), end; !error && it != end;
       it.increment(error)) {
    std::error_code unreadable;  // a descriptor closed since it was listed
    if (fs::read_symlink(it->path(), unreadable) == file) return true;
  }
  return false;
}

// Holds a key's lock the way another process's compile does: the lock file flock'ed through a descriptor of
// its own (flock locks belong to the open file, so this blocks the cache in this very process too).
class ForeignKeyLock {
 public:
  ForeignKeyLock(const fs::path& directory, std::span<const std::byte> key)
      : path_(lock_path(directory, key)), fd_(::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    EXPECT_GE(fd_, 0) << path_;
    EXPECT_EQ(::flock(fd_, LOCK_EX | LOCK_NB), 0);
  }
  ForeignKeyLock(const ForeignKeyLock&) = delete;
  ForeignKeyLock& operator=(const ForeignKeyLock&) = delete;
  ~ForeignKeyLock() { release(); }
  // As a holder does when its compile is done: remove the file, then unlock.
  void release() {
    if (fd_ < 0) return;
    ::unlink(path_.c_str());
    ::close(fd_);
    fd_ = -1;
  }

 private:
  fs::path path_;
  int fd_;
};

TEST(BinaryCache, WaitsForTheKeysLockThenLoadsWhatItsHolderStored) {
  ScratchDirectory dir{"binary_cache_test"};
  const std::vector<std::byte> key = bytes("locked key");
  std::unique_ptr<BinaryCache> cache = open_cache(dir.path());
  ForeignKeyLock other_process(dir.path(), key);
  auto waiting = cache->get_async(key, must_not_compile());
  EXPECT_EQ(waiting.wait_for(100ms), std::future_status::timeout);
  EXPECT_TRUE(cache->compiling(key));

  Result<std::unique_ptr<cache::DiskStore>> store = cache::DiskStore::open({.directory = dir.path()});
  ASSERT_THAT(store, IsOk());
  ASSERT_THAT((*store)->store(key, bytes("the holder's binary")), IsOk());
  other_process.release();

  Result<BinaryPtr> loaded = waiting.get();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(text(**loaded), "the holder's binary");
  const CacheStats stats = cache->stats();
  EXPECT_EQ(stats.other_process_builds, 1u);
  EXPECT_EQ(stats.disk_loads, 1u);
  EXPECT_EQ(stats.builds, 0u);
}

TEST(BinaryCache, ClosingCancelsACompileWaitingForAnotherProcess) {
  ScratchDirectory dir{"binary_cache_test"};
  const std::vector<std::byte> key = bytes("locked key");
  std::unique_ptr<BinaryCache> cache = open_cache(dir.path());
  ForeignKeyLock other_process(dir.path(), key);
  auto waiting = cache->get_async(key, must_not_compile());
  EXPECT_EQ(waiting.wait_for(50ms), std::future_status::timeout);
  cache.reset();  // returns although the lock is still held
  EXPECT_THAT(waiting.get(), StatusIs(Code::cancelled, "another process"));
}

// Two processes miss the same key at once: one compiles, the other waits for its lock and loads its entry.
TEST(BinaryCache, TwoProcessesCompileAKeyOnce) {
  ScratchDirectory dir{"binary_cache_test"};
  ScratchDirectory scratch{"binary_cache_test"};
  const fs::path log = scratch.path() / "compiles.log";
  const std::vector<std::byte> key = bytes("shared between processes");
  // The process that compiles holds the key's lock until the other is seen waiting for it (its descriptor of the
  // lock file): then the other cannot have found the entry without waiting, however late it was scheduled. The
  // deadline is only a hang guard, for an other process that never asks.
  pid_t other = 0;  // set in each process after the fork
  const fs::path locked = lock_path(fs::canonical(dir.path()), key);
  const CompileFunction compile = [log, locked, &other]() -> Result<BinaryBytes> {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!has_open(other, locked)) {
      if (std::chrono::steady_clock::now() > deadline)
        return internal_error("hang guard: the other process never waited for the key's lock");
      std::this_thread::sleep_for(1ms);
    }
    std::ofstream(log, std::ios::app) << ::getpid() << "\n";
    return bytes("shared binary");
  };
  // What each process did, as the child's exit code.
  enum Outcome { compiled = 10, waited = 11, loaded_without_waiting = 12, failed = 13 };
  const auto run = [&]() -> Outcome {
    Result<std::unique_ptr<BinaryCache>> cache = BinaryCache::open({.directory = dir.path()});
    if (!cache.ok()) return failed;
    Result<BinaryPtr> binary = (*cache)->get(key, compile);
    if (!binary.ok() || text(**binary) != "shared binary") return failed;
    const CacheStats stats = (*cache)->stats();
    if (stats.builds == 1) return compiled;
    if (stats.other_process_builds == 1) return waited;
    return stats.disk_loads == 1 ? loaded_without_waiting : failed;
  };

  // Start together: each process tells the other it is about to ask.
  int to_parent[2];
  int to_child[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  ASSERT_EQ(::pipe(to_child), 0);
  // No thread of this process is running here (earlier tests joined theirs), so the child may start its own.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    other = ::getppid();
    char byte = 'c';
    if (::write(to_parent[1], &byte, 1) != 1 || ::read(to_child[0], &byte, 1) != 1) ::_exit(failed);
    ::_exit(run());
  }
  other = child;
  char byte = 'p';
  ASSERT_EQ(::read(to_parent[0], &byte, 1), 1);
  ASSERT_EQ(::write(to_child[1], &byte, 1), 1);
  const Outcome parent = run();
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) ::close(fd);
  ASSERT_TRUE(WIFEXITED(status));
  const auto outcome_of_child = static_cast<Outcome>(WEXITSTATUS(status));

  std::ifstream lines(log);
  const auto compiles = std::count(std::istreambuf_iterator<char>(lines), std::istreambuf_iterator<char>(), '\n');
  EXPECT_EQ(compiles, 1);
  EXPECT_TRUE((parent == compiled && outcome_of_child == waited) || (parent == waited && outcome_of_child == compiled))
      << "parent " << parent << ", child " << outcome_of_child;
  EXPECT_TRUE(files_ending(dir.path(), ".lock").empty());
}

}  // namespace
}  // namespace accel::jit

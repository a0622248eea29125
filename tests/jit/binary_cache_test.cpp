// The binary cache in one process: a compile once then memory, a later cache loading from disk, damaged entries,
// bounds on disk and in memory, concurrent misses, failing and throwing compiles, closing, bad options and an
// unusable directory, and NVRTC programs stored and decoded. binary_cache_processes_test.cpp holds the tests across
// processes.
#include "jit/binary_cache.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "jit/binary_cache_testing.hpp"
#include "jit/nvrtc_compiler.hpp"
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

TEST(BinaryCache, CompilesOnceThenAnswersFromMemory) {
  ScratchDirectory dir{"binary_cache_test"};
  std::unique_ptr<BinaryCache> cache = open_cache(dir.path());
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->directory(), dir.path());
  std::atomic<int> calls = 0;
  const std::vector<std::byte> key = bytes("key");

  Result<BinaryPtr> first = cache->get(key, counted(calls, "binary"));
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(text(**first), "binary");
  Result<BinaryPtr> second = cache->get(key, counted(calls, "other"));
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(second->get(), first->get());
  EXPECT_EQ(calls, 1);
  Result<std::optional<BinaryPtr>> found = cache->find(key);
  ASSERT_THAT(found, IsOk());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(found->value().get(), first->get());
  Result<std::optional<BinaryPtr>> absent = cache->find(bytes("never stored"));
  ASSERT_THAT(absent, IsOk());
  EXPECT_FALSE(absent->has_value());

  const CacheStats stats = cache->stats();
  EXPECT_EQ(stats.builds, 1u);
  EXPECT_EQ(stats.build_failures, 0u);
  EXPECT_EQ(stats.disk_stores, 1u);
  EXPECT_EQ(stats.disk_loads, 0u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.misses, 2u);  // the first get, the find of the absent key
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(files_ending(dir.path(), ".entry").size(), 1u);
  EXPECT_TRUE(files_ending(dir.path(), ".lock").empty()) << "lock files are removed after the compile";
}

TEST(BinaryCache, ALaterCacheLoadsFromDiskInsteadOfCompiling) {
  ScratchDirectory dir{"binary_cache_test"};
  std::atomic<int> calls = 0;
  const std::vector<std::byte> key = bytes("persisted key");
  {
    std::unique_ptr<BinaryCache> writer = open_cache(dir.path());
    ASSERT_THAT(writer->get(key, counted(calls, "persisted binary")), IsOk());
  }
  std::unique_ptr<BinaryCache> reader = open_cache(dir.path());
  Result<BinaryPtr> loaded = reader->get(key, must_not_compile());
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(text(**loaded), "persisted binary");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(reader->stats().disk_loads, 1u);
  EXPECT_EQ(reader->stats().builds, 0u);
  EXPECT_EQ(reader->stats().other_process_builds, 0u);

  // find() reads the disk too, and keeps what it read in memory.
  std::unique_ptr<BinaryCache> finder = open_cache(dir.path());
  Result<std::optional<BinaryPtr>> found = finder->find(key);
  ASSERT_THAT(found, IsOk());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(text(*found->value()), "persisted binary");
  EXPECT_EQ(finder->stats().disk_loads, 1u);
  EXPECT_EQ(finder->stats().entries, 1u);
}

TEST(BinaryCache, MemoryOnlyCacheWritesNothing) {
  ScratchDirectory dir{"binary_cache_test"};
  std::unique_ptr<BinaryCache> cache = open_cache({.persistent = false, .directory = dir.path()});
  EXPECT_TRUE(cache->directory().empty());
  std::atomic<int> calls = 0;
  ASSERT_THAT(cache->get(bytes("k"), counted(calls, "v")), IsOk());
  EXPECT_TRUE(fs::is_empty(dir.path()));
  EXPECT_EQ(cache->stats().disk_stores, 0u);
  std::unique_ptr<BinaryCache> other = open_cache({.persistent = false, .directory = dir.path()});
  ASSERT_THAT(other->get(bytes("k"), counted(calls, "v")), IsOk());
  EXPECT_EQ(calls, 2);
}

TEST(BinaryCache, DamagedEntryIsCompiledAgain) {
  ScratchDirectory dir{"binary_cache_test"};
  std::atomic<int> calls = 0;
  const std::vector<std::byte> key = bytes("damaged key");
  {
    std::unique_ptr<BinaryCache> writer = open_cache(dir.path());
    ASSERT_THAT(writer->get(key, counted(calls, "the good binary")), IsOk());
  }
  const std::vector<fs::path> entries = files_ending(dir.path(), ".entry");
  ASSERT_EQ(entries.size(), 1u);
  {
    // Overwrite the last bytes (the value) in place: the checksum no longer matches.
    std::fstream file(entries[0], std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-4, std::ios::end);
    file.write("XXXX", 4);
  }

  std::unique_ptr<BinaryCache> reader = open_cache(dir.path());
  Result<BinaryPtr> recompiled = reader->get(key, counted(calls, "the good binary"));
  ASSERT_THAT(recompiled, IsOk());
  EXPECT_EQ(text(**recompiled), "the good binary");
  EXPECT_EQ(calls, 2);
  const CacheStats stats = reader->stats();
  EXPECT_EQ(stats.disk_rejects, 1u);
  EXPECT_EQ(stats.disk_loads, 0u);
  EXPECT_EQ(stats.builds, 1u);
  EXPECT_EQ(stats.disk_stores, 1u);

  // The recompiled binary replaced the damaged entry.
  std::unique_ptr<BinaryCache> later = open_cache(dir.path());
  Result<BinaryPtr> loaded = later->get(key, must_not_compile());
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(text(**loaded), "the good binary");
}

TEST(BinaryCache, SmallMaxBytesKeepsTheDirectoryBounded) {
  ScratchDirectory dir{"binary_cache_test"};
  constexpr std::uint64_t kMaxBytes = 16 << 10;
  std::unique_ptr<BinaryCache> cache = open_cache({.directory = dir.path(), .max_bytes = kMaxBytes});
  std::atomic<int> calls = 0;
  for (int i = 0; i < 32; ++i) {
    ASSERT_THAT(cache->get(bytes("key " + std::to_string(i)),
                           counted(calls, std::string(2000, static_cast<char>('a' + i % 26)))),
                IsOk());
  }
  std::uint64_t total = 0;
  const std::vector<fs::path> entries = files_ending(dir.path(), ".entry");
  for (const fs::path& entry : entries) total += fs::file_size(entry);
  EXPECT_LE(total, kMaxBytes);
  EXPECT_LT(entries.size(), 32u);
  EXPECT_GT(entries.size(), 0u);
  EXPECT_TRUE(files_ending(dir.path(), ".lock").empty());

  std::unique_ptr<BinaryCache> later = open_cache({.directory = dir.path(), .max_bytes = kMaxBytes});
  Result<std::optional<BinaryPtr>> oldest = later->find(bytes("key 0"));
  ASSERT_THAT(oldest, IsOk());
  EXPECT_FALSE(oldest->has_value()) << "the least recently used entry was evicted";
  Result<std::optional<BinaryPtr>> newest = later->find(bytes("key 31"));
  ASSERT_THAT(newest, IsOk());
  EXPECT_TRUE(newest->has_value());
}

TEST(BinaryCache, MemoryKeepsTheMostRecentlyUsed) {
  std::unique_ptr<BinaryCache> cache = open_cache({.memory_capacity = 2, .persistent = false});
  std::atomic<int> calls = 0;
  const auto get = [&](std::string_view key) { ASSERT_THAT(cache->get(bytes(key), counted(calls, "v")), IsOk()); };
  get("a");
  get("b");
  get("a");  // a is now more recent than b
  get("c");  // evicts b
  EXPECT_EQ(calls, 3);
  get("a");
  get("c");
  EXPECT_EQ(calls, 3);
  get("b");
  EXPECT_EQ(calls, 4);
  const CacheStats stats = cache->stats();
  EXPECT_EQ(stats.capacity, 2u);
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.evictions, 2u);
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_EQ(stats.misses, 4u);
}

TEST(BinaryCache, ConcurrentMissesShareOneCompile) {
  ScratchDirectory dir{"binary_cache_test"};
  std::unique_ptr<BinaryCache> cache = open_cache(dir.path());
  std::atomic<int> calls = 0;
  std::atomic<int> ready = 0;
  constexpr int kThreads = 16;
  std::vector<Result<BinaryPtr>> results(kThreads, internal_error("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (ready < kThreads) std::this_thread::yield();
      results[static_cast<std::size_t>(i)] = cache->get(bytes("contended"), [&]() -> Result<BinaryBytes> {
        ++calls;
        std::this_thread::sleep_for(50ms);
        return bytes("one binary");
      });
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(calls, 1);
  for (const Result<BinaryPtr>& result : results) {
    ASSERT_THAT(result, IsOk());
    EXPECT_EQ(result->get(), results[0]->get());
  }
  const CacheStats stats = cache->stats();
  EXPECT_EQ(stats.builds, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, kThreads - 1u);
}

TEST(BinaryCache, FailedCompileIsNotCachedAndEveryWaiterGetsItsError) {
  ScratchDirectory dir{"binary_cache_test"};
  std::unique_ptr<BinaryCache> cache = open_cache(dir.path());
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls = 0;
  const std::vector<std::byte> key = bytes("bad program");
  std::vector<std::shared_future<Result<BinaryPtr>>> waiters;
  for (int i = 0; i < 8; ++i) {
    waiters.push_back(cache->get_async(key, [&]() -> Result<BinaryBytes> {
      ++calls;
      released.wait();
      return invalid_argument("bad.cu: NVRTC compile failed: expected a ';'");
    }));
  }
  release.set_value();
  for (auto& waiter : waiters) EXPECT_THAT(waiter.get(), StatusIs(Code::invalid_argument, "expected a ';'"));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache->stats().build_failures, 1u);
  EXPECT_EQ(cache->stats().disk_stores, 0u);
  EXPECT_TRUE(files_ending(dir.path(), ".entry").empty());
  Result<std::optional<BinaryPtr>> found = cache->find(key);
  ASSERT_THAT(found, IsOk());
  EXPECT_FALSE(found->has_value());

  // The next request compiles again.
  Result<BinaryPtr> fixed = cache->get(key, counted(calls, "fixed"));
  ASSERT_THAT(fixed, IsOk());
  EXPECT_EQ(text(**fixed), "fixed");
  EXPECT_EQ(calls, 2);
}

TEST(BinaryCache, ThrowingCompileIsAnInternalError) {
  ScratchDirectory dir{"binary_cache_test"};
  std::unique_ptr<BinaryCache> cache = open_cache(dir.path());
  EXPECT_THAT(cache->get(bytes("k1"), []() -> Result<BinaryBytes> { throw std::runtime_error("boom"); }),
              StatusIs(Code::internal, "boom"));
  EXPECT_THAT(cache->get(bytes("k2"), []() -> Result<BinaryBytes> { throw 42; }), StatusIs(Code::internal, "threw"));
  EXPECT_THAT(cache->get(bytes("k3"), CompileFunction()), StatusIs(Code::internal, "threw"));
  EXPECT_EQ(cache->stats().build_failures, 3u);
  // The compile threads survived.
  std::atomic<int> calls = 0;
  EXPECT_THAT(cache->get(bytes("k1"), counted(calls, "v")), IsOk());
}

TEST(BinaryCache, CompilingCoversQueuedAndRunningCompiles) {
  std::unique_ptr<BinaryCache> cache = open_cache({.persistent = false, .compile_threads = 1});
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  const std::vector<std::byte> a = bytes("a");
  const std::vector<std::byte> b = bytes("b");
  auto running = cache->get_async(a, [&]() -> Result<BinaryBytes> {
    started.set_value();
    released.wait();
    return bytes("A");
  });
  auto queued = cache->get_async(b, [&]() -> Result<BinaryBytes> { return bytes("B"); });
  started.get_future().wait();
  EXPECT_TRUE(cache->compiling(a));
  EXPECT_TRUE(cache->compiling(b));
  EXPECT_FALSE(cache->compiling(bytes("c")));
  EXPECT_EQ(queued.wait_for(20ms), std::future_status::timeout) << "one compile thread, busy with a";
  release.set_value();
  ASSERT_THAT(running.get(), IsOk());
  ASSERT_THAT(queued.get(), IsOk());
  EXPECT_FALSE(cache->compiling(a));
  EXPECT_FALSE(cache->compiling(b));
}

// The running compile is held until closing has visibly begun (the queued one is answered `cancelled`, which only
// closing does while the one compile thread is busy), so closing must wait for it: an order of events, not a sleep.
TEST(BinaryCache, ClosingCancelsQueuedCompilesAndFinishesRunningOnes) {
  std::unique_ptr<BinaryCache> cache = open_cache({.persistent = false, .compile_threads = 1});
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> finished = false;
  auto running = cache->get_async(bytes("running"), [&]() -> Result<BinaryBytes> {
    started.set_value();
    released.wait();
    finished = true;
    return bytes("done");
  });
  std::atomic<int> calls = 0;
  auto queued = cache->get_async(bytes("queued"), counted(calls, "never"));
  started.get_future().wait();
  std::thread closer([&] { cache.reset(); });
  // Only a hang guard: closing cancels the queued compile before it waits for the running one.
  const bool cancelled_while_running = queued.wait_for(30s) == std::future_status::ready;
  EXPECT_FALSE(finished) << "the running compile was not held";
  release.set_value();
  closer.join();
  ASSERT_TRUE(cancelled_while_running) << "hang guard: the queued compile was not cancelled while one ran";
  EXPECT_THAT(queued.get(), StatusIs(Code::cancelled));
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(finished) << "closing returned before the running compile ended";
  Result<BinaryPtr> result = running.get();
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(text(**result), "done");
}

TEST(BinaryCache, OpenRefusesBadOptions) {
  EXPECT_THAT(BinaryCache::open({.persistent = false, .compile_threads = 0}),
              StatusIs(Code::invalid_argument, "compile_threads"));
}

// The disk only saves compile time: a directory that cannot be used (in the way, or refused as one others may
// write) leaves the cache in memory, where it still compiles once per key.
TEST(BinaryCache, AnUnusableDirectoryLeavesTheCacheInMemory) {
  ScratchDirectory dir{"binary_cache_test"};
  const fs::path file = dir.path() / "a file";
  std::ofstream(file) << "in the way";
  const fs::path shared = dir.path() / "shared";
  fs::create_directory(shared);
  fs::permissions(shared, fs::perms::all);
  for (const fs::path& unusable : {file / "cache", shared}) {
    SCOPED_TRACE(unusable);
    std::unique_ptr<BinaryCache> cache = open_cache({.directory = unusable});
    EXPECT_TRUE(cache->directory().empty());
    std::atomic<int> compiles = 0;
    const CompileFunction compile = [&]() -> Result<BinaryBytes> {
      ++compiles;
      return bytes("binary");
    };
    ASSERT_THAT(cache->get(bytes("key"), compile).status(), IsOk());
    ASSERT_THAT(cache->get(bytes("key"), compile).status(), IsOk());
    EXPECT_EQ(compiles.load(), 1);
  }
  EXPECT_TRUE(fs::is_empty(shared));
}

TEST(BinaryCache, StoresNvrtcProgramsThatALaterCacheDecodes) {
  ScratchDirectory dir{"binary_cache_test"};
  const Program program{.name = "axpy.cu",
                        .source = R"(
template <class T>
__global__ void axpy(T* y, const T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
})",
                        .name_expressions = {"axpy<float>"}};
  const std::vector<std::byte> key = program_key(program, 90);
  std::atomic<int> calls = 0;
  const CompileFunction compile = [&]() -> Result<BinaryBytes> {
    ++calls;
    ACCEL_ASSIGN_OR_RETURN(CompiledProgram compiled, compile_with_nvrtc(program, 90));
    return encode(compiled);
  };

  Result<BinaryPtr> first = open_cache(dir.path())->get(key, compile);
  ASSERT_THAT(first, IsOk());
  Result<CompiledProgram> compiled = decode_compiled_program(**first);
  ASSERT_THAT(compiled, IsOk());

  std::unique_ptr<BinaryCache> later = open_cache(dir.path());
  Result<BinaryPtr> loaded = later->get(key, compile);
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(later->stats().disk_loads, 1u);
  Result<CompiledProgram> decoded = decode_compiled_program(**loaded);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->code, compiled->code);
  EXPECT_EQ(decoded->lowered_names, compiled->lowered_names);
  EXPECT_EQ(text(std::span(decoded->code).first(4)),
            "\x7f"
            "ELF");
  EXPECT_TRUE(decoded->symbol_of("axpy<float>").starts_with("_Z"));
}

}  // namespace
}  // namespace accel::jit

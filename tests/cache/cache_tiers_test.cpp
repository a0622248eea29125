// The cache component beyond a plain LRU: bounds by bytes, builds that throw, the disk tier (load, reject,
// rebuild), background builds, locking across processes, and what its stats count.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <latch>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cache/cache.hpp"
#include "testing/scratch_directory.hpp"
#include "testing/status_matchers.hpp"

namespace accel::cache {
namespace {

using namespace std::chrono_literals;
using testing::IsOk;
using testing::StatusIs;
using TextCache = Cache<std::string>;

std::span<const std::byte> key(std::string_view text) { return std::as_bytes(std::span(text.data(), text.size())); }

Bytes bytes(std::string_view text) {
  const std::span<const std::byte> view = key(text);
  return {view.begin(), view.end()};
}

// A build that counts its calls and makes `value`.
auto counted(std::atomic<int>& calls, std::string value) {
  return [&calls, value = std::move(value)]() -> Result<std::string> {
    ++calls;
    return value;
  };
}

std::unique_ptr<DiskStore> open_store(const std::filesystem::path& directory) {
  Result<std::unique_ptr<DiskStore>> store = DiskStore::open({.directory = directory});
  if (!store.ok()) ADD_FAILURE() << store.status().to_string();
  return store.ok() ? std::move(*store) : nullptr;
}

// A cache of strings over a disk tier that stores them as they are; decode refuses entries starting with '!'.
CacheOptions<std::string> disk_options(const std::filesystem::path& directory) {
  return {.name = "texts",
          .max_entries = 8,
          .disk = open_store(directory),
          .encode = [](const std::string& value) -> std::optional<Bytes> { return bytes(value); },
          .decode = [](std::span<const std::byte> stored) -> Result<std::shared_ptr<const std::string>> {
            std::string text(reinterpret_cast<const char*>(stored.data()), stored.size());
            if (text.starts_with('!')) return invalid_argument("undecodable entry");
            return std::make_shared<const std::string>(std::move(text));
          }};
}

TEST(CacheTiersTest, ABoundOnBytesEvictsTheLeastRecentlyUsedUntilTheRestFits) {
  TextCache cache({.name = "texts", .max_bytes = 10, .size_of = [](const std::string& s) { return s.size(); }});
  std::atomic<int> calls{0};
  ASSERT_THAT(cache.get(key("a"), counted(calls, "aaaa")), IsOk());
  ASSERT_THAT(cache.get(key("b"), counted(calls, "bbbb")), IsOk());
  ASSERT_THAT(cache.get(key("a"), counted(calls, "aaaa")), IsOk());  // a is now the most recent
  ASSERT_THAT(cache.get(key("c"), counted(calls, "cccc")), IsOk());  // 12 bytes: b goes
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.bytes, 8u);
  EXPECT_EQ(stats.capacity_bytes, 10u);
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_NE(cache.peek(key("a")), nullptr);
  EXPECT_EQ(cache.peek(key("b")), nullptr);

  // Larger than the bound on its own: handed out, not kept, and everything else is gone with it.
  Result<std::shared_ptr<const std::string>> big = cache.get(key("big"), counted(calls, "0123456789ab"));
  ASSERT_THAT(big, IsOk());
  EXPECT_EQ(**big, "0123456789ab");
  stats = cache.stats();
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.bytes, 0u);
  EXPECT_EQ(stats.evictions, 4u);
}

TEST(CacheTiersTest, ABuildThatThrowsIsAnInternalErrorAndIsNotCached) {
  TextCache cache({.name = "texts", .max_entries = 4});
  EXPECT_THAT(cache.get(key("k"), []() -> Result<std::string> { throw std::runtime_error("boom"); }),
              StatusIs(Code::internal, "boom"));
  EXPECT_THAT(cache.get(key("k"), []() -> Result<std::string> { throw 42; }), StatusIs(Code::internal, "threw"));
  std::atomic<int> calls{0};
  ASSERT_THAT(cache.get(key("k"), counted(calls, "fine")), IsOk());
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.builds, 3u);
  EXPECT_EQ(stats.build_failures, 2u);
  EXPECT_EQ(stats.entries, 1u);
}

TEST(CacheTiersTest, ALaterCacheLoadsFromDiskInsteadOfBuilding) {
  accel::testing::ScratchDirectory dir{"cache_tiers_test"};
  std::atomic<int> calls{0};
  {
    TextCache first(disk_options(dir.path()));
    ASSERT_THAT(first.get(key("k"), counted(calls, "built")), IsOk());
    const CacheStats stats = first.stats();
    EXPECT_EQ(stats.disk_stores, 1u);
    EXPECT_EQ(stats.directory, dir.path().string());
  }
  TextCache second(disk_options(dir.path()));
  Result<std::shared_ptr<const std::string>> loaded = second.get(key("k"), counted(calls, "built again"));
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(**loaded, "built");
  EXPECT_EQ(calls.load(), 1);
  const CacheStats stats = second.stats();
  EXPECT_EQ(stats.disk_loads, 1u);
  EXPECT_EQ(stats.builds, 0u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.entries, 1u);

  TextCache finder(disk_options(dir.path()));
  Result<std::optional<std::shared_ptr<const std::string>>> found = finder.find(key("k"));
  ASSERT_THAT(found, IsOk());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(***found, "built");
  EXPECT_EQ(finder.stats().entries, 1u);
}

TEST(CacheTiersTest, UndecodableAndDamagedEntriesAreErasedRebuiltAndCounted) {
  accel::testing::ScratchDirectory dir{"cache_tiers_test"};
  std::unique_ptr<DiskStore> store = open_store(dir.path());
  ASSERT_THAT(store->store(key("undecodable"), bytes("!garbage")), IsOk());
  ASSERT_THAT(store->store(key("damaged"), bytes("fine once")), IsOk());
  {
    std::fstream file(store->entry_path(key("damaged")), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-1, std::ios::end);
    file.put('#');
  }
  TextCache cache(disk_options(dir.path()));
  std::atomic<int> calls{0};
  Result<std::shared_ptr<const std::string>> rebuilt = cache.get(key("undecodable"), counted(calls, "rebuilt"));
  ASSERT_THAT(rebuilt, IsOk());
  EXPECT_EQ(**rebuilt, "rebuilt");
  ASSERT_THAT(cache.get(key("damaged"), counted(calls, "rebuilt too")), IsOk());
  EXPECT_EQ(calls.load(), 2);
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.disk_rejects, 2u);
  EXPECT_EQ(stats.disk_loads, 0u);
  EXPECT_EQ(stats.builds, 2u);
  EXPECT_EQ(stats.disk_stores, 2u);

  // What was rebuilt replaced the bad entries.
  TextCache later(disk_options(dir.path()));
  ASSERT_THAT(later.get(key("undecodable"), counted(calls, "again")), IsOk());
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(later.stats().disk_loads, 1u);
}

TEST(CacheTiersTest, ABuildMayBringItsOwnEncodingOrNone) {
  accel::testing::ScratchDirectory dir{"cache_tiers_test"};
  CacheOptions<std::string> options = disk_options(dir.path());
  options.encode = nullptr;
  TextCache cache(std::move(options));
  ASSERT_THAT(cache.get(key("own"),
                        []() -> Result<Built<std::string>> {
                          return Built<std::string>{std::make_shared<const std::string>("value"), bytes("encoded")};
                        }),
              IsOk());
  ASSERT_THAT(cache.get(key("none"), []() -> Result<std::string> { return std::string("memory only"); }), IsOk());
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.disk_stores, 1u);
  EXPECT_EQ(stats.disk_skips, 1u);
  TextCache later(disk_options(dir.path()));
  Result<std::shared_ptr<const std::string>> loaded =
      later.get(key("own"), []() -> Result<std::string> { return internal_error("must load"); });
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(**loaded, "encoded");
}

TEST(CacheTiersTest, BackgroundBuildsAnswerLaterAndOncePerKey) {
  Result<std::unique_ptr<BuildPool>> pool = BuildPool::start(2);
  ASSERT_THAT(pool, IsOk());
  TextCache cache({.name = "texts", .max_entries = 4, .pool = std::move(*pool)});
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls{0};
  auto slow = [&]() -> Result<std::string> {
    ++calls;
    released.wait();
    return std::string("slow");
  };
  EXPECT_FALSE(cache.get_if_ready(key("k"), slow).has_value());
  EXPECT_TRUE(cache.building(key("k")));
  TextCache::Future joined = cache.get_async(key("k"), slow);
  EXPECT_EQ(joined.wait_for(20ms), std::future_status::timeout);
  EXPECT_FALSE(cache.get_if_ready(key("k"), slow).has_value());
  release.set_value();
  ASSERT_THAT(joined.get(), IsOk());
  EXPECT_EQ(**joined.get(), "slow");
  std::optional<Result<std::shared_ptr<const std::string>>> ready = cache.get_if_ready(key("k"), slow);
  ASSERT_TRUE(ready.has_value());
  EXPECT_THAT(*ready, IsOk());
  EXPECT_FALSE(cache.building(key("k")));
  EXPECT_EQ(calls.load(), 1);
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.not_ready, 2u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_EQ(stats.builds, 1u);
}

// The running build is held until closing has visibly begun (the queued one is answered `cancelled`, which only
// closing does while the pool's one thread is busy), so closing must wait for it: an order of events, not a sleep.
TEST(CacheTiersTest, ClosingCancelsQueuedBuildsAndFinishesRunningOnes) {
  Result<std::unique_ptr<BuildPool>> pool = BuildPool::start(1);
  ASSERT_THAT(pool, IsOk());
  auto cache = std::make_unique<TextCache>(CacheOptions<std::string>{.name = "texts", .pool = std::move(*pool)});
  std::latch started(1);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  TextCache::Future running = cache->get_async(key("running"), [&]() -> Result<std::string> {
    started.count_down();
    released.wait();
    return std::string("done");
  });
  started.wait();
  TextCache::Future queued = cache->get_async(key("queued"), []() -> Result<std::string> { return std::string(); });
  std::thread closer([&] { cache.reset(); });
  // Only a hang guard: closing cancels the queued build before it waits for the running one.
  const bool cancelled_while_running = queued.wait_for(30s) == std::future_status::ready;
  EXPECT_EQ(running.wait_for(0s), std::future_status::timeout) << "the running build was not held";
  release.set_value();
  closer.join();
  ASSERT_TRUE(cancelled_while_running) << "hang guard: the queued build was not cancelled while one ran";
  EXPECT_THAT(queued.get(), StatusIs(Code::cancelled, "closed"));
  // Closing returned, so the running build had finished, and it was answered rather than cancelled.
  ASSERT_EQ(running.wait_for(0s), std::future_status::ready) << "closing returned before the running build ended";
  EXPECT_THAT(running.get(), IsOk());
  EXPECT_EQ(**running.get(), "done");
}

TEST(CacheTiersTest, ABuildWaitsForAnotherProcesssLockThenLoadsWhatItStored) {
  accel::testing::ScratchDirectory dir{"cache_tiers_test"};
  const std::vector<std::byte> locked = bytes("locked key");
  // Another process's lock, as KeyLock takes it: flock on the key's lock file (a second open file description
  // conflicts within one process too).
  const std::filesystem::path lock_path =
      dir.path() / fmt::format("{:016x}.lock", XXH3_64bits(locked.data(), locked.size()));
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);

  Result<std::unique_ptr<BuildPool>> pool = BuildPool::start(1);
  ASSERT_THAT(pool, IsOk());
  CacheOptions<std::string> options = disk_options(dir.path());
  options.lock_across_processes = true;
  options.pool = std::move(*pool);
  TextCache cache(std::move(options));
  TextCache::Future waiting = cache.get_async(
      locked, []() -> Result<std::string> { return internal_error("built although another process did"); });
  EXPECT_EQ(waiting.wait_for(100ms), std::future_status::timeout);
  ASSERT_THAT(open_store(dir.path())->store(locked, bytes("the holder's value")), IsOk());
  ::unlink(lock_path.c_str());
  ::close(fd);

  Result<std::shared_ptr<const std::string>> loaded = waiting.get();
  ASSERT_THAT(loaded, IsOk());
  EXPECT_EQ(**loaded, "the holder's value");
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.other_process_builds, 1u);
  EXPECT_EQ(stats.disk_loads, 1u);
  EXPECT_EQ(stats.builds, 0u);
}

TEST(CacheTiersTest, PutPeekAndEraseKeepTheirCounts) {
  TextCache cache({.name = "texts", .max_entries = 2});
  EXPECT_EQ(cache.peek(key("a")), nullptr);
  cache.put(key("a"), std::make_shared<const std::string>("first"));
  cache.put(key("a"), std::make_shared<const std::string>("second"));
  EXPECT_EQ(cache.stats().entries, 1u);
  ASSERT_NE(cache.peek(key("a")), nullptr);
  EXPECT_EQ(*cache.peek(key("a")), "second");
  cache.erase(key("a"));
  EXPECT_EQ(cache.peek(key("a")), nullptr);
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.evictions, 0u);
  EXPECT_EQ(stats.directory, "");
}

}  // namespace
}  // namespace accel::cache

// The cache component in memory: hits, keys hashed once by their caller, LRU eviction by entries, failed builds, and
// one build per key under concurrent misses.
#include "cache/cache.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <latch>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "testing/status_matchers.hpp"

namespace accel::cache {
namespace {

using namespace std::chrono_literals;
using testing::IsOk;
using testing::StatusIs;

struct Plan {
  std::string name;
};

using PlanCache = Cache<Plan>;
using PlanResult = Result<std::shared_ptr<const Plan>>;

std::span<const std::byte> key(std::string_view text) { return std::as_bytes(std::span(text.data(), text.size())); }

// A build that counts its calls and makes a plan named after its key.
struct CountingBuild {
  std::atomic<int>* calls;
  std::string name;
  PlanResult operator()() const {
    calls->fetch_add(1);
    return std::shared_ptr<const Plan>(std::make_shared<Plan>(Plan{name}));
  }
};

TEST(CacheTest, AHitDoesNotCallBuild) {
  PlanCache cache({.name = "plans", .max_entries = 4});
  std::atomic<int> calls{0};
  PlanResult first = cache.get(key("a"), CountingBuild{&calls, "a"});
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ((*first)->name, "a");

  PlanResult second = cache.get(key("a"), [&]() -> PlanResult {
    ADD_FAILURE() << "a cached plan was built again";
    return internal_error("built again");
  });
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(second->get(), first->get());
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.capacity, 4u);
  EXPECT_EQ(stats.evictions, 0u);
}

TEST(CacheTest, KeysAreComparedByteForByte) {
  PlanCache cache({.name = "plans", .max_entries = 4});
  std::atomic<int> calls{0};
  const std::string with_nul("ab\0c", 4);
  const std::string other_nul("ab\0d", 4);
  PlanResult a = cache.get(key(with_nul), CountingBuild{&calls, "1"});
  PlanResult b = cache.get(key(other_nul), CountingBuild{&calls, "2"});
  PlanResult c = cache.get(key("ab"), CountingBuild{&calls, "3"});
  PlanResult empty = cache.get(key(""), CountingBuild{&calls, "4"});
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  ASSERT_THAT(c, IsOk());
  ASSERT_THAT(empty, IsOk());
  EXPECT_EQ(calls.load(), 4);
  EXPECT_EQ((*a)->name, "1");
  EXPECT_EQ((*b)->name, "2");
  EXPECT_EQ((*c)->name, "3");
  EXPECT_EQ((*cache.get(key(with_nul), CountingBuild{&calls, "x"}))->name, "1");
  EXPECT_EQ((*cache.get(key(""), CountingBuild{&calls, "x"}))->name, "4");
  EXPECT_EQ(calls.load(), 4);
}

// A key its caller hashed once finds the entry of its bytes, and only of its bytes: a hash that another key's bytes
// also have is a miss, never the other key's value.
TEST(CacheTest, AKeyHashedOnceFindsTheEntryOfItsBytesAlone) {
  PlanCache cache({.name = "plans", .max_entries = 4});
  std::atomic<int> calls{0};
  const auto no_disk = [](std::span<const std::byte>) -> PlanResult { return internal_error("no disk tier"); };
  const auto bytes_of = [](std::string_view text) {
    const std::span<const std::byte> k = key(text);
    return std::vector<std::byte>(k.begin(), k.end());
  };
  ASSERT_THAT(cache.get(key("a"), CountingBuild{&calls, "a"}), IsOk());
  const HashedKey a = HashedKey::of(bytes_of("a"));
  EXPECT_EQ(a.hash, key_hash("a"));
  PlanResult found = cache.get(a, CountingBuild{&calls, "again"}, no_disk);
  ASSERT_THAT(found, IsOk());
  EXPECT_EQ((*found)->name, "a");
  EXPECT_EQ(calls.load(), 1);

  const HashedKey b_with_a_hash{bytes_of("b"), a.hash};
  PlanResult b = cache.get(b_with_a_hash, CountingBuild{&calls, "b"}, no_disk);
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ((*b)->name, "b");
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ((*cache.get(key("b"), CountingBuild{&calls, "x"}))->name, "b");  // kept under its bytes
  EXPECT_EQ(calls.load(), 2);
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.misses, 2u);
}

TEST(CacheTest, TheLeastRecentlyUsedPlanIsEvictedBeyondCapacity) {
  PlanCache cache({.name = "plans", .max_entries = 2});
  std::atomic<int> calls{0};
  ASSERT_THAT(cache.get(key("a"), CountingBuild{&calls, "a"}), IsOk());
  ASSERT_THAT(cache.get(key("b"), CountingBuild{&calls, "b"}), IsOk());
  ASSERT_THAT(cache.get(key("a"), CountingBuild{&calls, "a"}), IsOk());  // a is now the most recent
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(cache.stats().evictions, 0u);

  ASSERT_THAT(cache.get(key("c"), CountingBuild{&calls, "c"}), IsOk());  // evicts b
  EXPECT_EQ(calls.load(), 3);
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.entries, 2u);

  ASSERT_THAT(cache.get(key("a"), CountingBuild{&calls, "a"}), IsOk());  // still there
  EXPECT_EQ(calls.load(), 3);
  ASSERT_THAT(cache.get(key("b"), CountingBuild{&calls, "b"}), IsOk());  // built again, evicts c
  EXPECT_EQ(calls.load(), 4);
  ASSERT_THAT(cache.get(key("a"), CountingBuild{&calls, "a"}), IsOk());
  EXPECT_EQ(calls.load(), 4);
  ASSERT_THAT(cache.get(key("c"), CountingBuild{&calls, "c"}), IsOk());  // c was evicted; evicts b
  EXPECT_EQ(calls.load(), 5);

  stats = cache.stats();
  EXPECT_EQ(stats.evictions, 3u);
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.misses, 5u);
  EXPECT_EQ(stats.hits, 3u);
}

TEST(CacheTest, AnEvictedPlanStaysValidForThoseHoldingIt) {
  PlanCache cache({.name = "plans", .max_entries = 1});
  std::atomic<int> calls{0};
  PlanResult a = cache.get(key("a"), CountingBuild{&calls, "a"});
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(cache.get(key("b"), CountingBuild{&calls, "b"}), IsOk());
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ((*a)->name, "a");
  EXPECT_EQ(cache.stats().entries, 1u);
}

TEST(CacheTest, AFailedBuildReachesEveryWaiterAndIsNotCached) {
  PlanCache cache({.name = "plans", .max_entries = 4});
  constexpr int kWaiters = 7;
  std::atomic<int> calls{0};
  std::latch building(1);
  auto failing = [&]() -> PlanResult {
    calls.fetch_add(1);
    building.count_down();
    // Fail only once every other requester waits for this build (each counted a hit before it waited).
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (cache.stats().hits < static_cast<std::uint64_t>(kWaiters) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    return not_supported("no engine for this graph");
  };

  std::vector<PlanResult> results(kWaiters + 1, internal_error("not run"));
  std::vector<std::thread> threads;
  threads.emplace_back([&] { results[0] = cache.get(key("k"), failing); });
  building.wait();
  for (int i = 1; i <= kWaiters; ++i) {
    threads.emplace_back([&, i] { results[i] = cache.get(key("k"), failing); });
  }
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(calls.load(), 1);
  for (const PlanResult& result : results) EXPECT_THAT(result, StatusIs(Code::not_supported, "no engine"));
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, static_cast<std::uint64_t>(kWaiters));

  // Not cached: the next requester builds again, and may succeed.
  PlanResult retry = cache.get(key("k"), CountingBuild{&calls, "k"});
  ASSERT_THAT(retry, IsOk());
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(cache.stats().entries, 1u);
}

TEST(CacheTest, ConcurrentMissesOfOneKeyBuildOnce) {
  PlanCache cache({.name = "plans", .max_entries = 8});
  constexpr int kThreads = 16;
  std::atomic<int> calls{0};
  std::latch start(kThreads);
  std::vector<PlanResult> results(kThreads, internal_error("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = cache.get(key("shared"), [&]() -> PlanResult {
        calls.fetch_add(1);
        std::this_thread::sleep_for(50ms);
        return std::shared_ptr<const Plan>(std::make_shared<Plan>(Plan{"shared"}));
      });
    });
  }
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(calls.load(), 1);
  ASSERT_THAT(results[0], IsOk());
  for (const PlanResult& result : results) {
    ASSERT_THAT(result, IsOk());
    EXPECT_EQ(result->get(), results[0]->get());
  }
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, static_cast<std::uint64_t>(kThreads - 1));
  EXPECT_EQ(stats.entries, 1u);
}

TEST(CacheTest, DifferentKeysBuildConcurrently) {
  PlanCache cache({.name = "plans", .max_entries = 8});
  constexpr int kKeys = 4;
  std::atomic<int> inside{0};
  std::atomic<int> most_inside{0};
  std::vector<PlanResult> results(kKeys, internal_error("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kKeys; ++i) {
    threads.emplace_back([&, i] {
      const std::string name = "key-" + std::to_string(i);
      results[i] = cache.get(key(name), [&]() -> PlanResult {
        const int now = inside.fetch_add(1) + 1;
        int seen = most_inside.load();
        while (now > seen && !most_inside.compare_exchange_weak(seen, now)) {
        }
        // Stay inside until every build is inside at once (or give up: builds were serialised).
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (most_inside.load() < kKeys && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(1ms);
        }
        inside.fetch_sub(1);
        return std::shared_ptr<const Plan>(std::make_shared<Plan>(Plan{name}));
      });
    });
  }
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(most_inside.load(), kKeys) << "builds of different keys ran one at a time";
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_THAT(results[i], IsOk());
    EXPECT_EQ((*results[i])->name, "key-" + std::to_string(i));
  }
  EXPECT_EQ(cache.stats().misses, static_cast<std::uint64_t>(kKeys));
  EXPECT_EQ(cache.stats().entries, static_cast<std::uint64_t>(kKeys));
}

TEST(CacheTest, ACacheWithoutBoundsKeepsEveryPlan) {
  PlanCache cache({.name = "plans"});
  std::atomic<int> calls{0};
  for (int i = 0; i < 100; ++i) {
    const std::string name = std::to_string(i);
    ASSERT_THAT(cache.get(key(name), CountingBuild{&calls, name}), IsOk());
  }
  for (int i = 0; i < 100; ++i) {
    const std::string name = std::to_string(i);
    ASSERT_THAT(cache.get(key(name), CountingBuild{&calls, name}), IsOk());
  }
  EXPECT_EQ(calls.load(), 100);
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.name, "plans");
  EXPECT_EQ(stats.capacity, 0u);
  EXPECT_EQ(stats.entries, 100u);
  EXPECT_EQ(stats.evictions, 0u);
  EXPECT_EQ(stats.builds, 100u);
}

}  // namespace
}  // namespace accel::cache

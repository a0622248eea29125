#include "accel/core/future.hpp"

#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <coroutine>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;
using testing::IsOk;
using testing::StatusIs;

TEST(Future, WaitReturnsTheValueSetOnAnotherThread) {
  Promise<int> promise;
  Future<int> future = promise.future();
  std::thread producer([p = std::move(promise)]() mutable {
    std::this_thread::sleep_for(2ms);
    p.set(42);
  });
  Result<int> r = future.wait();
  producer.join();
  EXPECT_EQ(*r, 42);
  EXPECT_FALSE(future.valid());
  EXPECT_THAT(future.wait(), StatusIs(Code::failed_precondition, "already consumed"));
}

TEST(Future, WaitForTimesOutWithDeadlineExceededAndStaysValid) {
  Promise<int> promise;
  Future<int> future = promise.future();
  EXPECT_THAT(future.wait_for(1ms), StatusIs(Code::deadline_exceeded));
  EXPECT_TRUE(future.valid());
  promise.set(5);
  EXPECT_EQ(*future.wait_for(1s), 5);
}

TEST(Future, ADroppedPromiseAnswersCancelled) {
  Future<int> future;
  {
    Promise<int> promise;
    future = promise.future();
  }
  EXPECT_THAT(future.wait(), StatusIs(Code::cancelled, "dropped without a reply"));
}

TEST(Future, OnlyTheFirstSetCounts) {
  Promise<int> promise;
  Future<int> future = promise.future();
  promise.set(1);
  promise.set(2);
  EXPECT_EQ(*future.wait(), 1);
}

TEST(Future, ThenChainsValuesAndSkipsErrors) {
  Promise<int> promise;
  Future<std::string> chained =
      promise.future().then([](int x) { return x * 2; }).then([](int x) { return std::to_string(x); });
  promise.set(21);
  EXPECT_EQ(*chained.wait(), "42");

  Promise<int> failing;
  std::atomic<bool> ran{false};
  Future<int> skipped = failing.future().then([&](int x) {
    ran = true;
    return x;
  });
  failing.set(invalid_argument("bad"));
  EXPECT_THAT(skipped.wait(), StatusIs(Code::invalid_argument, "bad"));
  EXPECT_FALSE(ran);
}

TEST(Future, ThenWithAResultParameterSeesErrors) {
  Promise<int> promise;
  Future<std::string> seen = promise.future().then([](Result<int> r) -> std::string { return r.status().to_string(); });
  promise.set(unavailable("worker replaced"));
  EXPECT_EQ(*seen.wait(), "unavailable: worker replaced");
}

TEST(Future, ThenFlattensReturnedFuturesAndResults) {
  Promise<int> outer;
  Promise<int> inner;
  Future<int> inner_future = inner.future();
  Future<int> flattened =
      outer.future().then([&](int x) { return std::move(inner_future).then([x](int y) { return x + y; }); });
  outer.set(1);
  EXPECT_FALSE(flattened.ready());
  inner.set(2);
  EXPECT_EQ(*flattened.wait(), 3);

  Future<int> from_result = make_ready_future<int>(4).then(
      [](int x) -> Result<int> { return x > 3 ? Result<int>(not_supported("big")) : x; });
  EXPECT_THAT(from_result.wait(), StatusIs(Code::not_supported));
}

TEST(Future, AnExceptionInAContinuationBecomesInternal) {
  Future<int> f = make_ready_future<int>(1).then([](int) -> int { throw std::runtime_error("boom"); });
  EXPECT_THAT(f.wait(), StatusIs(Code::internal, "boom"));
}

TEST(Future, ThenOnAnAlreadyReadyFutureRunsAtOnce) {
  bool ran = false;
  Future<Done> f = make_ready_future<int>(3).then([&](int) { ran = true; });
  EXPECT_TRUE(ran);
  EXPECT_THAT(f.wait(), IsOk());
}

Future<int> add_later(Future<int> a, Future<int> b) {
  Result<int> x = co_await a;
  if (!x) co_return x.status();
  Result<int> y = co_await b;
  if (!y) co_return y.status();
  co_return *x + *y;
}

TEST(Future, CoAwaitResumesWhenTheResultArrives) {
  Promise<int> pa, pb;
  Future<int> sum = add_later(pa.future(), pb.future());
  EXPECT_FALSE(sum.ready());
  std::thread t([&] {
    pa.set(40);
    pb.set(2);
  });
  EXPECT_EQ(*sum.wait(), 42);
  t.join();
}

TEST(Future, CoAwaitPropagatesErrorsAsValues) {
  Promise<int> pa, pb;
  Future<int> sum = add_later(pa.future(), pb.future());
  pa.set(stale_handle("buffer #3 was freed"));
  EXPECT_THAT(sum.wait(), StatusIs(Code::stale_handle, "buffer #3"));
}

Future<int> throws_inside() {
  static_cast<void>(co_await make_ready_future<int>(1));  // only to suspend once before throwing
  throw std::logic_error("coroutine failed");
}

TEST(Future, AnExceptionEscapingACoroutineBecomesInternal) {
  EXPECT_THAT(throws_inside().wait(), StatusIs(Code::internal, "coroutine failed"));
}

#if defined(__SANITIZE_THREAD__)
constexpr bool kUnderThreadSanitizer = true;
#else
constexpr bool kUnderThreadSanitizer = false;
#endif

// One level of a chain of coroutines awaiting each other: adds one to the level below.
Future<int> one_more(Future<int> below) {
  Result<int> r = co_await below;
  if (!r) co_return r.status();
  co_return *r + 1;
}

// Builds the chain bottom-up, so that building it does not recurse: each level starts, finds the level below
// not ready and suspends.
Future<int> chain_of(std::size_t levels, Future<int> bottom) {
  Future<int> top = std::move(bottom);
  for (std::size_t i = 0; i < levels; ++i) top = one_more(std::move(top));
  return top;
}

// Runs `body` on a thread whose whole stack is `stack_bytes`, so that a recursion deeper than that crashes.
void run_on_small_stack(std::size_t stack_bytes, std::function<void()> body) {
  pthread_attr_t attributes;
  ASSERT_EQ(pthread_attr_init(&attributes), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attributes, stack_bytes), 0);
  pthread_t thread;
  auto trampoline = [](void* f) -> void* {
    (*static_cast<std::function<void()>*>(f))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attributes, trampoline, &body), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attributes);
}

TEST(Future, AHundredThousandNestedCoroutinesCompleteOnASmallStack) {
  constexpr std::size_t kLevels = 100'000;
  Promise<int> bottom;
  Future<int> top = chain_of(kLevels, bottom.future());
  EXPECT_FALSE(top.ready());
  // 256 KiB holds about a thousand nested resumptions; symmetric transfer needs the same few frames for any depth.
  run_on_small_stack(256 * 1024, [&] { bottom.set(0); });
  EXPECT_EQ(*top.wait(), static_cast<int>(kLevels));
}

// A million levels; a tenth under ThreadSanitizer, where a million take 1.7 GB and 5 s.
TEST(Future, AVeryDeepNestedChainCompletes) {
  constexpr std::size_t kLevels = kUnderThreadSanitizer ? 100'000 : 1'000'000;
  Promise<int> bottom;
  Future<int> top = chain_of(kLevels, bottom.future());
  bottom.set(0);
  EXPECT_EQ(*top.wait(), static_cast<int>(kLevels));
}

TEST(Future, AnErrorTravelsUpANestedChainUnchanged) {
  Promise<int> bottom;
  Future<int> top = chain_of(1'000, bottom.future());
  bottom.set(unavailable("worker replaced"));
  EXPECT_THAT(top.wait(), StatusIs(Code::unavailable, "worker replaced"));
}

Future<int> one_more_noting_thread(Future<int> below, std::vector<std::thread::id>& resumed_on, std::size_t level) {
  Result<int> r = co_await below;
  resumed_on[level] = std::this_thread::get_id();
  if (!r) co_return r.status();
  co_return *r + 1;
}

TEST(Future, EveryLevelOfANestedChainResumesOnTheThreadThatFulfilledTheBottom) {
  constexpr std::size_t kLevels = 1'000;
  std::vector<std::thread::id> resumed_on(kLevels);
  Promise<int> bottom;
  Future<int> top = bottom.future();
  for (std::size_t level = 0; level < kLevels; ++level) top = one_more_noting_thread(std::move(top), resumed_on, level);
  std::thread::id fulfiller;
  std::thread([&] {
    fulfiller = std::this_thread::get_id();
    bottom.set(0);
  }).join();
  EXPECT_EQ(*top.wait(), static_cast<int>(kLevels));
  for (std::size_t level = 0; level < kLevels; ++level) ASSERT_EQ(resumed_on[level], fulfiller) << "level " << level;
}

TEST(Future, ThenOnACoroutinesFutureRunsWhenTheCoroutineReturns) {
  Promise<int> bottom;
  std::atomic<int> seen{-1};
  Future<Done> observed = one_more(bottom.future()).then([&](int v) { seen = v; });
  EXPECT_EQ(seen.load(), -1);
  bottom.set(41);
  EXPECT_EQ(seen.load(), 42);
  EXPECT_THAT(observed.wait(), IsOk());
}

// An awaitable of another library: it parks the coroutine, and whoever holds the handle resumes it.
struct Parked {
  std::coroutine_handle<>* parked;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> coroutine) noexcept { *parked = coroutine; }
  void await_resume() const noexcept {}
};

Future<int> after_parking(int value, std::coroutine_handle<>* parked) {
  co_await Parked{parked};
  co_return value;
}

TEST(Future, ACoroutineResumedOutsideAnyFulfilmentStillResumesItsAwaiter) {
  std::coroutine_handle<> parked;
  Future<int> top = one_more(after_parking(41, &parked));
  EXPECT_FALSE(top.ready());
  parked.resume();
  EXPECT_EQ(*top.wait(), 42);
}

Future<int> fulfil_another_then_return(Future<int> below, Promise<int>& another) {
  Result<int> r = co_await below;
  if (!r) co_return r.status();
  another.set(*r * 100);
  co_return *r;
}

TEST(Future, AFulfilmentInsideAResumedCoroutineCompletesBothChains) {
  Promise<int> bottom, another;
  Future<int> other_chain = chain_of(1'000, another.future());
  Future<int> top = chain_of(1'000, fulfil_another_then_return(bottom.future(), another));
  bottom.set(1);
  EXPECT_EQ(*other_chain.wait(), 1'100);
  EXPECT_EQ(*top.wait(), 1'001);
}

// The awaiting coroutine registers itself while another thread fulfils the future: whichever comes first, the
// coroutine resumes exactly once and sees the value.
TEST(Future, CoAwaitRacingTheFulfillingThreadNeverLosesTheResult) {
  constexpr int kRounds = 2'000;
  for (int round = 0; round < kRounds; ++round) {
    Promise<int> bottom;
    Future<int> below = bottom.future();
    std::atomic<bool> go{false};
    std::thread fulfiller([&, p = std::move(bottom)]() mutable {
      while (!go.load(std::memory_order_acquire)) {
      }
      p.set(round);
    });
    go.store(true, std::memory_order_release);
    Future<int> top = one_more(std::move(below));
    ASSERT_EQ(*top.wait(), round + 1);
    fulfiller.join();
  }
}

TEST(Future, ManyThreadsWaitOnManyFutures) {
  constexpr int kThreads = 4, kPerThread = 250;
  std::vector<std::thread> threads;
  std::atomic<long> total{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Promise<int> p;
        Future<int> f = p.future();
        std::thread setter([p = std::move(p), v = t + i]() mutable { p.set(v); });
        total += *f.wait();
        setter.join();
      }
    });
  }
  for (auto& t : threads) t.join();
  long expected = 0;
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kPerThread; ++i) expected += t + i;
  EXPECT_EQ(total.load(), expected);
}

// A thread per connection waiting for its batch once made every core yield (docs/PERFORMANCE.md, section 67): at
// most active_waiter_limit() waiters spin or yield at once, and a lone waiter always may.
TEST(Future, ALoneWaiterMaySpinAndOnlyTheLimitMayAtOnce) {
  const unsigned limit = detail::active_waiter_limit();
  ASSERT_GE(limit, 1u);
  ASSERT_EQ(detail::active_waiters(), 0u);
  std::vector<std::unique_ptr<detail::ActiveWait>> places;
  for (unsigned i = 0; i < limit; ++i) {
    places.push_back(std::make_unique<detail::ActiveWait>());
    EXPECT_TRUE(places.back()->held()) << "place " << i << " of " << limit;
  }
  EXPECT_FALSE(detail::ActiveWait().held());
  EXPECT_EQ(detail::active_waiters(), limit);
  places.pop_back();
  EXPECT_TRUE(detail::ActiveWait().held());
  places.clear();
  EXPECT_EQ(detail::active_waiters(), 0u);
}

// While a CPU device is open its threads use every core, and a waiter sleeps after its spin rather than yield
// (docs/PERFORMANCE.md, section 101): claims nest, and the cores are free again when the last one goes.
TEST(Future, CoresAreClaimedWhileAnyClaimIsHeld) {
  ASSERT_FALSE(detail::cores_claimed());
  {
    const detail::CoreClaim first;
    EXPECT_TRUE(detail::cores_claimed());
    {
      const detail::CoreClaim second;
      EXPECT_TRUE(detail::cores_claimed());
    }
    EXPECT_TRUE(detail::cores_claimed());
  }
  EXPECT_FALSE(detail::cores_claimed());
}

TEST(Future, ManyMoreWaitersThanTheLimitAllWakeAndNoMoreThanItSpin) {
  const unsigned limit = detail::active_waiter_limit();
  const unsigned waiters = 3 * limit + 4;
  std::atomic<bool> sampling{true};
  std::atomic<unsigned> most{0};
  std::thread sampler([&] {
    while (sampling.load()) most.store(std::max(most.load(), detail::active_waiters()));
  });
  std::vector<Promise<int>> promises(waiters);
  std::atomic<unsigned> started{0};
  std::atomic<long> total{0};
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < waiters; ++i)
    threads.emplace_back([&, future = promises[i].future()]() mutable {
      ++started;
      total += *future.wait();
    });
  while (started.load() < waiters) std::this_thread::yield();
  std::this_thread::sleep_for(10ms);
  for (unsigned i = 0; i < waiters; ++i) promises[i].set(static_cast<int>(i));
  for (auto& t : threads) t.join();
  sampling = false;
  sampler.join();
  EXPECT_LE(most.load(), limit);
  EXPECT_EQ(total.load(), static_cast<long>(waiters) * (waiters - 1) / 2);
  EXPECT_EQ(detail::active_waiters(), 0u);
}

}  // namespace
}  // namespace accel

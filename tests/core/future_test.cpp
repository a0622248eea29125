#include "accel/core/future.hpp"

#include <gtest/gtest.h>

#include <atomic>
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
  co_await make_ready_future<int>(1);
  throw std::logic_error("coroutine failed");
}

TEST(Future, AnExceptionEscapingACoroutineBecomesInternal) {
  EXPECT_THAT(throws_inside().wait(), StatusIs(Code::internal, "coroutine failed"));
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

}  // namespace
}  // namespace accel

#include "serve/batcher.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "testing/status_matchers.hpp"

namespace accel::serve {
namespace {

using namespace std::chrono_literals;
using testing::IsOk;
using testing::StatusIs;

// The work batched here: squaring numbers, one reply per number, on a thread of the test's (as a device's thread
// answers a batch) unless a batch is held back to keep it in flight.
struct Square {
  int value = 0;
  Promise<int> reply;
};

class Squarer {
 public:
  // Batches are held in flight until release() while `hold` is set.
  explicit Squarer(bool hold = false) : hold_(hold) {}
  ~Squarer() { release(); }

  Future<Done> run(std::vector<Square> batch) {
    Promise<Done> done;
    Future<Done> future = done.future();
    std::lock_guard lock(mutex_);
    std::vector<int> values;
    for (const Square& item : batch) values.push_back(item.value);
    batches_.push_back(values);
    callers_.push_back(std::this_thread::get_id());
    held_.push_back({std::move(batch), std::move(done)});
    if (!hold_) finish_held();
    return future;
  }

  void release() {
    std::lock_guard lock(mutex_);
    hold_ = false;
    finish_held();
  }

  std::vector<std::vector<int>> batches() const {
    std::lock_guard lock(mutex_);
    return batches_;
  }

  // The thread that ran each batch.
  std::vector<std::thread::id> callers() const {
    std::lock_guard lock(mutex_);
    return callers_;
  }

 private:
  void finish_held() {
    for (auto& [batch, done] : held_) {
      threads_.emplace_back([batch = std::move(batch), done = std::move(done)]() mutable {
        for (Square& item : batch) item.reply.set(item.value * item.value);
        done.set(Done{});
      });
    }
    held_.clear();
  }

  mutable std::mutex mutex_;
  bool hold_;
  std::vector<std::vector<int>> batches_;
  std::vector<std::thread::id> callers_;
  std::vector<std::pair<std::vector<Square>, Promise<Done>>> held_;
  std::vector<std::jthread> threads_;
};

Batcher<Square>::Run runner(Squarer& squarer) {
  return [&squarer](std::vector<Square> batch) { return squarer.run(std::move(batch)); };
}

Future<int> submit(Batcher<Square>& batcher, int value, std::uint32_t tokens, Status* status = nullptr) {
  Square item{.value = value};
  Future<int> reply = item.reply.future();
  Status submitted = batcher.submit(std::move(item), tokens);
  if (status) *status = submitted;
  return reply;
}

// Waits that end at once when the batcher works, and otherwise only keep a broken run from hanging: far beyond any
// delay of a loaded machine, so reaching one is a failure of the batcher, not of the machine.
constexpr auto kHangGuard = 30s;

void wait_for_depth(const Batcher<Square>& batcher, std::size_t requests, unsigned in_flight) {
  for (const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
       std::chrono::steady_clock::now() < deadline;) {
    const QueueDepth depth = batcher.depth();
    if (depth.requests == requests && depth.batches_in_flight == in_flight) return;
    std::this_thread::sleep_for(1ms);
  }
  FAIL() << "hang guard: the queue did not reach " << requests << " requests with " << in_flight
         << " batches in flight within " << kHangGuard.count() << " s";
}

TEST(Batcher, AnswersEveryRequestOnceWithItsOwnResult) {
  Squarer squarer;
  Batcher<Square> batcher({.batch_tokens = 64}, runner(squarer));
  std::vector<Future<int>> replies;
  for (int i = 0; i < 200; ++i) replies.push_back(submit(batcher, i, 1 + i % 7));
  for (int i = 0; i < 200; ++i) EXPECT_EQ(*replies[i].wait(), i * i);
  std::size_t seen = 0;
  for (const auto& batch : squarer.batches()) seen += batch.size();
  EXPECT_EQ(seen, 200u);
}

// A batcher that waited for more would answer no sooner than max_wait after the submit: the bound is that, 10 s,
// against the microseconds of an answer at once, so no delay of a loaded machine reaches it.
TEST(Batcher, AnIdleDeviceTakesARequestAtOnceWithoutWaitingForMore) {
  constexpr auto kMaxWait = 10s;
  Squarer squarer;
  Batcher<Square> batcher({.max_wait = kMaxWait}, runner(squarer));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(*submit(batcher, 3, 5).wait(), 9);
  EXPECT_LT(std::chrono::steady_clock::now() - start, kMaxWait);
}

// No hand-off to the batching thread when a slot is free: its wake-up would be every quiet request's latency.
TEST(Batcher, ARequestThatFindsASlotFreeRunsOnTheSubmittingThread) {
  Squarer squarer;
  Batcher<Square> batcher({.max_wait = 10s}, runner(squarer));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(*submit(batcher, i, 5).wait(), i * i);
    wait_for_depth(batcher, 0, 0);  // the slot is free again once the batch's own future is answered
  }
  for (std::thread::id caller : squarer.callers()) EXPECT_EQ(caller, std::this_thread::get_id());
  EXPECT_EQ(squarer.callers().size(), 3u);
}

TEST(Batcher, RequestsQueuedBehindABusyDeviceGoAsOneBatchWithinTheTokenBudget) {
  Squarer squarer(/*hold=*/true);
  Batcher<Square> batcher({.batch_tokens = 100, .in_flight = 1}, runner(squarer));
  std::vector<Future<int>> replies;
  replies.push_back(submit(batcher, 0, 10));
  wait_for_depth(batcher, 0, 1);
  // Behind the running batch: 4 x 30 tokens (the 4th would pass the budget of 100), then one of 500, larger than
  // the budget, which goes alone.
  for (int i = 1; i <= 4; ++i) replies.push_back(submit(batcher, i, 30));
  replies.push_back(submit(batcher, 5, 500));
  replies.push_back(submit(batcher, 6, 1));
  squarer.release();
  for (int i = 0; i <= 6; ++i) EXPECT_EQ(*replies[i].wait(), i * i);
  EXPECT_EQ(squarer.batches(), (std::vector<std::vector<int>>{{0}, {1, 2, 3}, {4}, {5}, {6}}));
}

// The first batch is held throughout, so nothing but max_wait can send the second (its tokens are far from the
// budget): that it goes at all while the first is held is the upper bound, and the hang guard of wait_for_depth
// is what fails a batcher that would wait for the first to finish. The lower bound is the property that it waits.
TEST(Batcher, ASecondBatchBehindARunningOneWaitsAtMostMaxWait) {
  constexpr auto kMaxWait = 30ms;
  Squarer squarer(/*hold=*/true);
  Batcher<Square> batcher({.batch_tokens = 1000, .max_wait = kMaxWait, .in_flight = 2}, runner(squarer));
  Future<int> first = submit(batcher, 1, 10);
  wait_for_depth(batcher, 0, 1);
  const auto start = std::chrono::steady_clock::now();
  Future<int> second = submit(batcher, 2, 10);
  wait_for_depth(batcher, 0, 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, kMaxWait);
  EXPECT_FALSE(first.ready()) << "the first batch was meant to be held while the second went";
  squarer.release();
  EXPECT_EQ(*first.wait(), 1);
  EXPECT_EQ(*second.wait(), 4);
}

// Over replicas, an idle one is an idle device: the second request goes at once beside the held first, long before
// max_wait (an hour, against the hang guard's 30 s).
TEST(Batcher, AnIdleReplicaTakesARequestAtOnceWhileAnotherIsBusy) {
  Squarer squarer(/*hold=*/true);
  Batcher<Square> batcher({.batch_tokens = 1000, .max_wait = 3600s, .in_flight = 2, .replicas = 2}, runner(squarer));
  Future<int> first = submit(batcher, 1, 10);
  wait_for_depth(batcher, 0, 1);
  Future<int> second = submit(batcher, 2, 10);
  wait_for_depth(batcher, 0, 2);
  squarer.release();
  EXPECT_EQ(*first.wait(), 1);
  EXPECT_EQ(*second.wait(), 4);
}

// Eight requests of 10 tokens wait behind two held replicas of 10 tokens each; the first slot freed takes its share
// of the work outstanding (90 or 80 tokens over two, as the other replica's batch has finished or not: 4 requests
// either way, far under the budget) and leaves the rest to the other replica instead of running all eight.
TEST(Batcher, OverReplicasABatchTakesItsShareOfTheQueue) {
  Squarer squarer(/*hold=*/true);
  Batcher<Square> batcher({.batch_tokens = 1000, .max_wait = 3600s, .in_flight = 2, .replicas = 2}, runner(squarer));
  std::vector<Future<int>> replies;
  replies.push_back(submit(batcher, 0, 10));
  replies.push_back(submit(batcher, 1, 10));
  wait_for_depth(batcher, 0, 2);
  for (int i = 2; i < 10; ++i) replies.push_back(submit(batcher, i, 10));
  wait_for_depth(batcher, 8, 2);
  squarer.release();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(*replies[i].wait(), i * i);
  const std::vector<std::vector<int>> batches = squarer.batches();
  ASSERT_GE(batches.size(), 4u);
  EXPECT_EQ(batches[2], (std::vector<int>{2, 3, 4, 5}));
}

TEST(Batcher, AFullBudgetGoesWithoutWaitingForMaxWait) {
  Squarer squarer(/*hold=*/true);
  Batcher<Square> batcher({.batch_tokens = 50, .max_wait = 10s, .in_flight = 2}, runner(squarer));
  Future<int> first = submit(batcher, 1, 10);
  wait_for_depth(batcher, 0, 1);
  Future<int> second = submit(batcher, 2, 50);
  wait_for_depth(batcher, 0, 2);
  squarer.release();
  EXPECT_EQ(*second.wait(), 4);
}

TEST(Batcher, ABatchHoldsAtMostMaxRequests) {
  Squarer squarer(/*hold=*/true);
  Batcher<Square> batcher({.batch_tokens = 1000, .max_requests = 2, .in_flight = 1}, runner(squarer));
  std::vector<Future<int>> replies;
  replies.push_back(submit(batcher, 0, 1));
  wait_for_depth(batcher, 0, 1);
  for (int i = 1; i <= 5; ++i) replies.push_back(submit(batcher, i, 1));  // far within the token budget
  squarer.release();
  for (int i = 0; i <= 5; ++i) EXPECT_EQ(*replies[i].wait(), i * i);
  EXPECT_EQ(squarer.batches(), (std::vector<std::vector<int>>{{0}, {1, 2}, {3, 4}, {5}}));
}

TEST(Batcher, MaxRequestsQueuedGoWithoutWaitingForMaxWait) {
  Squarer squarer(/*hold=*/true);
  Batcher<Square> batcher({.batch_tokens = 1000, .max_requests = 2, .max_wait = 10s, .in_flight = 2}, runner(squarer));
  Future<int> first = submit(batcher, 1, 10);
  wait_for_depth(batcher, 0, 1);
  const auto start = std::chrono::steady_clock::now();
  Future<int> second = submit(batcher, 2, 10);
  Future<int> third = submit(batcher, 3, 10);
  wait_for_depth(batcher, 0, 2);
  // A batcher that waited for max_wait would send them no sooner than 10 s: far beyond any delay of a loaded machine.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  squarer.release();
  EXPECT_EQ(*second.wait(), 4);
  EXPECT_EQ(*third.wait(), 9);
}

TEST(Batcher, AFullQueueRefusesInsteadOfGrowing) {
  Squarer squarer(/*hold=*/true);
  Batcher<Square> batcher({.queue_requests = 2, .queue_tokens = 100, .in_flight = 1}, runner(squarer));
  Future<int> running = submit(batcher, 0, 1);
  wait_for_depth(batcher, 0, 1);
  Status status;
  Future<int> a = submit(batcher, 1, 60, &status);
  EXPECT_THAT(status, IsOk());
  Future<int> too_many_tokens = submit(batcher, 2, 60, &status);
  EXPECT_THAT(status, StatusIs(Code::resource_exhausted));
  EXPECT_NE(status.message().find("queue_tokens"), std::string_view::npos) << status.to_string();
  Future<int> b = submit(batcher, 3, 1, &status);
  EXPECT_THAT(status, IsOk());
  Future<int> too_many_requests = submit(batcher, 4, 1, &status);
  EXPECT_THAT(status, StatusIs(Code::resource_exhausted));
  EXPECT_NE(status.message().find("queue_requests"), std::string_view::npos) << status.to_string();
  // A refused request's reply was dropped with it, never answered by the batch.
  EXPECT_THAT(too_many_requests.wait(), StatusIs(Code::cancelled));
  squarer.release();
  EXPECT_EQ(*a.wait(), 1);
  EXPECT_EQ(*b.wait(), 9);
}

TEST(Batcher, StopRunsEverythingQueuedThenRefuses) {
  Squarer squarer(/*hold=*/true);
  Batcher<Square> batcher({.in_flight = 1}, runner(squarer));
  std::vector<int> values;
  std::vector<Future<int>> replies;
  for (int i = 0; i < 20; ++i) {
    values.push_back(i);
    replies.push_back(submit(batcher, i, 3));
  }
  std::thread stopper([&] { batcher.stop(); });
  // The batches are released only once stop() has begun, which a refused submit shows; probes taken before that
  // are queued like the others and must be answered too (a full queue refuses them without queueing them).
  Status probe;
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
  for (int value = 20; probe.code() != Code::failed_precondition && std::chrono::steady_clock::now() < deadline;
       ++value) {
    Future<int> reply = submit(batcher, value, 3, &probe);
    if (probe.ok()) {
      values.push_back(value);
      replies.push_back(std::move(reply));
    }
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_THAT(probe, StatusIs(Code::failed_precondition)) << "hang guard: stop() never began refusing";
  squarer.release();
  stopper.join();
  for (std::size_t i = 0; i < replies.size(); ++i) {
    ASSERT_TRUE(replies[i].ready()) << values[i];
    EXPECT_EQ(*replies[i].wait(), values[i] * values[i]);
  }
  Status status;
  Future<int> late = submit(batcher, 1, 1, &status);
  EXPECT_THAT(status, StatusIs(Code::failed_precondition));
}

}  // namespace
}  // namespace accel::serve

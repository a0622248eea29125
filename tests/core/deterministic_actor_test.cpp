// Actor states driven without a thread (the DeterministicActor fixture), and the supervisor's restart budget on a
// clock the test sets.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "accel/core/actor.hpp"
#include "accel/core/supervision.hpp"
#include "testing/counter_actor.hpp"
#include "testing/deterministic_actor.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;
using namespace counter_testing;
using testing::IsOk;
using testing::StatusIs;

// -- the state alone, driven step by step on the test thread ------------------------------------

class DeterministicCounterTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_THAT(counter_.start(), IsOk()); }
  const Counter& state() { return static_cast<const Counter&>(counter_.state()); }

  std::atomic<int> builds_{0};
  testing::DeterministicActor<CounterProtocol> counter_{counter_factory(&builds_), "counter"};
};

TEST_F(DeterministicCounterTest, AHandlerRunsOnlyWhenTheTestStepsTheActor) {
  Future<std::int64_t> sum = counter_.ask(Add{.amount = 2});
  EXPECT_FALSE(sum.ready());
  EXPECT_EQ(state().total, 0);
  EXPECT_THAT(*counter_.step(), IsOk());
  EXPECT_EQ(state().total, 2);
  EXPECT_EQ(*sum.wait(), 2);
  EXPECT_FALSE(counter_.step().has_value());  // nothing queued
}

TEST_F(DeterministicCounterTest, QueuedRequestsRunOneAtATimeInTheOrderTheyCame) {
  for (int i = 1; i <= 3; ++i) counter_.tell(Add{.amount = i});
  Future<std::int64_t> total = counter_.ask(Get{});
  for (std::int64_t expected : {1, 3, 6}) {
    EXPECT_THAT(*counter_.step(), IsOk());
    EXPECT_EQ(state().total, expected);
    EXPECT_FALSE(total.ready());
  }
  EXPECT_THAT(*counter_.step(), IsOk());
  EXPECT_EQ(*total.wait(), 6);
  EXPECT_EQ(counter_.queued(), 0u);
}

TEST_F(DeterministicCounterTest, AnErrorReplyIsAlsoTheFailureTheSupervisorJudges) {
  counter_.tell(Add{.amount = 7});
  Future<Done> refused = counter_.ask(Fail{.code = Code::invalid_argument});
  EXPECT_THAT(*counter_.step(), IsOk());
  const Status failure = *counter_.step();
  EXPECT_THAT(failure, StatusIs(Code::invalid_argument, "asked to fail"));
  EXPECT_THAT(refused.wait(), StatusIs(Code::invalid_argument, "asked to fail"));
  EXPECT_EQ(counter_.directive_for(failure), Directive::resume);
  EXPECT_EQ(state().total, 7);
  EXPECT_EQ(counter_.directive_for(context_lost("device reset")), Directive::stop);
}

TEST_F(DeterministicCounterTest, AnExceptionEscapingAHandlerBecomesAnInternalReplyAndFailure) {
  Future<Done> blew_up = counter_.ask(Fail{.throw_instead = true});
  const Status failure = *counter_.step();
  EXPECT_THAT(failure, StatusIs(Code::internal, "Fail handler of 'counter' threw: handler blew up"));
  EXPECT_THAT(blew_up.wait(), StatusIs(Code::internal, "handler blew up"));
  EXPECT_EQ(counter_.directive_for(failure), Directive::restart);
}

TEST_F(DeterministicCounterTest, ARestartBuildsAFreshStateAndKeepsWhatIsQueued) {
  counter_.tell(Add{.amount = 7});
  counter_.tell(Fail{.throw_instead = true});
  Future<std::int64_t> after = counter_.ask(Get{});
  EXPECT_THAT(*counter_.step(), IsOk());
  ASSERT_EQ(counter_.directive_for(*counter_.step()), Directive::restart);
  ASSERT_THAT(counter_.restart(), IsOk());
  EXPECT_EQ(builds_.load(), 2);
  EXPECT_THAT(*counter_.step(), IsOk());
  EXPECT_EQ(*after.wait(), 0);
}

TEST(DeterministicActor, StartReturnsTheFactorysError) {
  testing::DeterministicActor<CounterProtocol> broken(
      []() -> Result<std::unique_ptr<CounterProtocol::Handler>> { return unavailable("no GPU"); });
  EXPECT_THAT(broken.start(), StatusIs(Code::unavailable, "no GPU"));
}

// -- the supervisor's restart budget, on a clock the test sets --------------------------------

TEST(RestartTracker, TheBackOffDoublesUpToItsCap) {
  RestartTracker tracker({.max_restarts = 10, .window = 60s, .initial_backoff = 8ms, .max_backoff = 40ms});
  const auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  std::vector<std::chrono::milliseconds> delays;
  for (int i = 0; i < 5; ++i) delays.push_back(*tracker.admit(now));
  EXPECT_EQ(delays, (std::vector<std::chrono::milliseconds>{8ms, 16ms, 32ms, 40ms, 40ms}));
}

TEST(RestartTracker, TheBudgetIsSpentWithinItsWindowAndComesBackAfterIt) {
  RestartTracker tracker({.max_restarts = 2, .window = 10s, .initial_backoff = 1ms, .max_backoff = 4ms});
  const auto start = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  EXPECT_EQ(tracker.admit(start), 1ms);
  EXPECT_EQ(tracker.admit(start + 1s), 2ms);
  EXPECT_EQ(tracker.admit(start + 9s), std::nullopt);
  EXPECT_EQ(tracker.describe_exhausted(), "restart budget exhausted (2 restarts in 10000 ms)");
  EXPECT_EQ(tracker.admit(start + 10s + 1ms), 2ms);  // the first restart left the window; the second is in it
}

}  // namespace
}  // namespace accel

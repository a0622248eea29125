// An actor's state that watches the work of its deferred replies itself (Protocol's look_after_replies and
// hand_over_replies), as a CUDA stream watches its GPU work while it waits (Note [Watching one's own work] in
// cuda_stream.hpp): it answers on its own thread while idle, and hands what is unanswered over before the next
// request runs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accel/core/actor.hpp"
#include "accel/core/system.hpp"
#include "testing/counter_actor.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using namespace counter_testing;
using namespace std::chrono_literals;
using testing::IsOk;

// Holds each Add's reply until the mailbox empties, then watches it: answers it on a look once `finished` is set, or
// hands it over (answers it there, as another thread would) when the wait ends first. `log` is written on the actor's
// thread only, and read by the test once a reply given after the last write has arrived.
struct WatchingCounter final : CounterProtocol::Handler {
  Status dispatch(Add& r, Promise<std::int64_t>& reply) override {
    log.emplace_back("add");
    held.emplace_back(std::move(reply), total += r.amount);
    return Status();
  }
  Result<std::int64_t> handle(Add& r) override { return total += r.amount; }
  Result<std::int64_t> handle(Get&) override {
    log.emplace_back("get");
    return total;
  }
  Result<Done> handle(Fail& r) override { return Status(r.code, "asked to fail"); }
  Result<Done> handle(Hold& r) override {
    r.gate->pass();
    return Done{};
  }
  Result<std::thread::id> handle(WhichThread&) override { return std::this_thread::get_id(); }
  [[nodiscard]] bool owes_replies() const noexcept override { return !held.empty() || !watched.empty(); }
  void mailbox_empty() override {
    if (held.empty()) return;
    log.emplace_back("watch");
    for (auto& entry : held) watched.push_back(std::move(entry));
    held.clear();
    watching->store(true);
  }
  void look_after_replies() override {
    if (watched.empty() || !finished->load()) return;
    log.emplace_back("answered on a look");
    answered_on = std::this_thread::get_id();
    answer_watched();
  }
  void hand_over_replies() override {
    if (watched.empty()) return;
    log.emplace_back("handed over");
    answer_watched();
  }
  void answer_watched() {
    for (auto& [reply, value] : watched) reply.set(value);
    watched.clear();
  }

  std::atomic<bool>* finished = nullptr;
  std::atomic<bool>* watching = nullptr;
  std::vector<std::pair<Promise<std::int64_t>, std::int64_t>> held, watched;
  std::vector<std::string> log;
  std::thread::id answered_on;
  std::int64_t total = 0;
};

class ActorIdleTest : public ::testing::Test {
 protected:
  // Awake as long as it owes replies (a minute), so that a look, not the sleep, ends the watch.
  ActorRef<CounterProtocol> spawn() {
    auto spawned = system_.spawn<CounterProtocol>(
        [this]() -> Result<std::unique_ptr<CounterProtocol::Handler>> {
          auto state = std::make_unique<WatchingCounter>();
          state->finished = &finished_;
          state->watching = &watching_;
          state_ = state.get();
          return state;
        },
        {.name = "watching", .mailbox = {.stay_awake = std::chrono::duration_cast<std::chrono::microseconds>(60s)}});
    EXPECT_THAT(spawned, IsOk());
    return *spawned;
  }

  System system_;
  std::atomic<bool> finished_{false};
  std::atomic<bool> watching_{false};
  WatchingCounter* state_ = nullptr;
};

TEST_F(ActorIdleTest, WatchedReplyIsAnsweredOnTheActorsOwnThreadWhileItWaits) {
  ActorRef<CounterProtocol> counter = spawn();
  Future<std::int64_t> added = counter.ask(Add{.amount = 2});
  while (!watching_.load()) std::this_thread::yield();
  EXPECT_FALSE(added.ready());  // nothing has finished yet
  finished_ = true;
  EXPECT_EQ(*added.wait(), 2);
  EXPECT_EQ(state_->log, (std::vector<std::string>{"add", "watch", "answered on a look"}));
  EXPECT_EQ(state_->answered_on, *counter.ask(WhichThread{}).wait());
}

TEST_F(ActorIdleTest, WatchedReplyIsHandedOverBeforeTheNextRequestRuns) {
  ActorRef<CounterProtocol> counter = spawn();
  Future<std::int64_t> added = counter.ask(Add{.amount = 5});
  while (!watching_.load()) std::this_thread::yield();
  EXPECT_EQ(*counter.ask(Get{}).wait(), 5);
  EXPECT_EQ(*added.wait(), 5);
  EXPECT_EQ(state_->log, (std::vector<std::string>{"add", "watch", "handed over", "get"}));
}

}  // namespace
}  // namespace accel

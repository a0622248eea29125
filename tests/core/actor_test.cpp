#include "accel/core/actor.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <latch>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "accel/core/system.hpp"
#include "testing/counter_actor.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;
using namespace counter_testing;
using testing::IsOk;
using testing::StatusIs;

// -- actors on their own threads ---------------------------------------------------------------------------

class ActorTest : public ::testing::Test {
 protected:
  ActorRef<CounterProtocol> spawn(ActorOptions options = {}) {
    auto ref = system_.spawn<CounterProtocol>(counter_factory(&builds_), std::move(options));
    EXPECT_THAT(ref, IsOk());
    return *ref;
  }
  std::atomic<int> builds_{0};
  System system_;
};

TEST_F(ActorTest, AskReturnsTheHandlersReply) {
  auto counter = spawn();
  EXPECT_EQ(*counter.ask(Add{.amount = 2}).wait(), 2);
  EXPECT_EQ(*counter.ask(Add{.amount = 3}).wait(), 5);
  EXPECT_EQ(*counter.ask(Get{}).wait(), 5);
}

TEST_F(ActorTest, TellIsProcessedInOrderBeforeLaterAsks) {
  auto counter = spawn();
  for (int i = 0; i < 100; ++i) ASSERT_THAT(counter.tell(Add{.amount = 1}), IsOk());
  EXPECT_EQ(*counter.ask(Get{}).wait(), 100);
}

TEST_F(ActorTest, StateIsBuiltAndUsedOnTheActorsOwnThread) {
  auto counter = spawn();
  auto a = *counter.ask(WhichThread{}).wait();
  auto b = *counter.ask(WhichThread{}).wait();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, std::this_thread::get_id());
}

TEST_F(ActorTest, ManyClientThreadsAreAllAnswered) {
  auto counter = spawn({.name = "counter", .mailbox = {.capacity = 64, .overflow = Overflow::block}});
  constexpr int kClients = 16, kPerClient = 500;
  std::vector<std::thread> clients;
  std::atomic<int> answered{0};
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&] {
      std::vector<Future<std::int64_t>> futures;
      for (int i = 0; i < kPerClient; ++i) futures.push_back(counter.ask(Add{.amount = 1}));
      for (auto& f : futures) {
        if (f.wait().ok()) ++answered;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(answered.load(), kClients * kPerClient);
  EXPECT_EQ(*counter.ask(Get{}).wait(), kClients * kPerClient);
}

TEST_F(ActorTest, AFullRejectingMailboxTellsTheSender) {
  auto counter = spawn({.name = "small", .mailbox = {.capacity = 2, .overflow = Overflow::reject}});
  Gate gate;
  auto busy = counter.ask(Hold{.gate = &gate});
  gate.wait_until_entered();  // the actor is inside Hold; its mailbox is empty
  std::vector<Future<std::int64_t>> queued;
  for (int i = 0; i < 2; ++i) queued.push_back(counter.ask(Add{.amount = 1}));
  EXPECT_THAT(counter.ask(Add{.amount = 1}).wait(), StatusIs(Code::resource_exhausted, "mailbox of 'small' is full"));
  EXPECT_THAT(counter.tell(Add{.amount = 1}), StatusIs(Code::resource_exhausted));
  gate.open();
  for (auto& f : queued) EXPECT_THAT(f.wait(), IsOk());
  EXPECT_THAT(busy.wait(), IsOk());
}

// Does the Adds queued right behind one together (Handler::take_queued), as a CUDA stream links a burst of requests;
// each batch's size goes to `batches`.
struct Batcher final : CounterProtocol::Handler {
  explicit Batcher(std::vector<int>* batches) : batches(batches) {}
  Status dispatch(Add& first, Promise<std::int64_t>& reply) override {
    std::vector<Envelope<Add>> behind;
    for (std::optional<Envelope<Add>> next; (next = take_queued<Add>());) behind.push_back(std::move(*next));
    batches->push_back(static_cast<int>(behind.size()) + 1);  // before any reply: the test reads it once answered
    reply.set(total += first.amount);
    for (Envelope<Add>& envelope : behind) envelope.reply.set(total += envelope.request.amount);
    return Status();
  }
  Result<std::int64_t> handle(Add& r) override { return total += r.amount; }
  Result<std::int64_t> handle(Get&) override { return total; }
  Result<Done> handle(Fail&) override { return Done{}; }
  Result<Done> handle(Hold& r) override {
    r.gate->pass();
    return Done{};
  }
  Result<std::thread::id> handle(WhichThread&) override { return std::this_thread::get_id(); }
  std::vector<int>* batches;
  std::int64_t total = 0;
};

TEST_F(ActorTest, AStateTakesTheRequestsOfItsTypeQueuedRightBehindTheOneItHandles) {
  std::vector<int> batches;  // written on the actor's thread, read once its replies are in
  auto batcher = *system_.spawn<CounterProtocol>(
      [&]() -> Result<std::unique_ptr<CounterProtocol::Handler>> { return std::make_unique<Batcher>(&batches); });
  Gate gate;
  auto blocker = batcher.ask(Hold{.gate = &gate});
  gate.wait_until_entered();  // everything below queues behind Hold
  std::vector<Future<std::int64_t>> adds;
  for (int i = 0; i < 10; ++i) adds.push_back(batcher.ask(Add{.amount = 1}));
  auto get = batcher.ask(Get{});  // another type: the batch ends before it
  for (int i = 0; i < 5; ++i) adds.push_back(batcher.ask(Add{.amount = 1}));
  gate.open();
  EXPECT_THAT(blocker.wait(), IsOk());
  for (int i = 0; i < 15; ++i) EXPECT_EQ(*adds[i].wait(), i + 1) << "request " << i;
  EXPECT_EQ(*get.wait(), 10);
  EXPECT_EQ(*batcher.ask(Add{.amount = 1}).wait(), 16);  // nothing queued behind it: a batch of one
  EXPECT_EQ(batches, (std::vector<int>{10, 5, 1}));

  Batcher unattached(&batches);  // a state no actor runs has no queue to take from
  EXPECT_FALSE(unattached.take_queued<Add>().has_value());
}

TEST_F(ActorTest, ResumeKeepsStateAfterAnErrorReply) {
  auto counter = spawn();
  ASSERT_EQ(*counter.ask(Add{.amount = 7}).wait(), 7);
  EXPECT_THAT(counter.ask(Fail{.code = Code::invalid_argument}).wait(), StatusIs(Code::invalid_argument));
  EXPECT_EQ(*counter.ask(Get{}).wait(), 7);
  EXPECT_EQ(counter.restart_count(), 0);
}

TEST_F(ActorTest, AnExceptionBecomesInternalAndRestartsFromTheFactory) {
  auto counter = spawn({.name = "c", .supervision = SupervisionPolicy().with_budget({.initial_backoff = 0ms})});
  ASSERT_EQ(*counter.ask(Add{.amount = 7}).wait(), 7);
  EXPECT_THAT(counter.ask(Fail{.throw_instead = true}).wait(), StatusIs(Code::internal, "handler blew up"));
  EXPECT_EQ(*counter.ask(Get{}).wait(), 0);  // fresh state
  EXPECT_EQ(counter.restart_count(), 1);
  EXPECT_EQ(builds_.load(), 2);
}

TEST_F(ActorTest, RequestsQueuedBehindAFailureSurviveTheRestart) {
  auto counter = spawn({.supervision = SupervisionPolicy().with_budget({.initial_backoff = 1ms})});
  Gate gate;
  auto blocker = counter.ask(Hold{.gate = &gate});
  gate.wait_until_entered();
  auto failure = counter.ask(Fail{});
  std::vector<Future<std::int64_t>> behind;
  for (int i = 0; i < 10; ++i) behind.push_back(counter.ask(Add{.amount = 1}));
  gate.open();
  EXPECT_THAT(blocker.wait(), IsOk());
  EXPECT_THAT(failure.wait(), StatusIs(Code::internal));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(*behind[i].wait(), i + 1) << "request " << i;
  EXPECT_EQ(counter.restart_count(), 1);
}

TEST_F(ActorTest, StopDirectiveAnswersQueuedRequestsAndRefusesNewOnes) {
  auto counter = spawn({.name = "stopper", .supervision = SupervisionPolicy().on(Code::internal, Directive::stop)});
  Gate gate;
  auto blocker = counter.ask(Hold{.gate = &gate});
  gate.wait_until_entered();
  auto failure = counter.ask(Fail{});
  auto queued = counter.ask(Add{.amount = 1});
  gate.open();
  EXPECT_THAT(failure.wait(), StatusIs(Code::internal));
  EXPECT_THAT(queued.wait(), StatusIs(Code::cancelled, "actor 'stopper' stopped"));
  EXPECT_THAT(counter.ask(Get{}).wait(), StatusIs(Code::cancelled, "actor 'stopper' is stopped"));
  EXPECT_THAT(counter.tell(Get{}), StatusIs(Code::cancelled));
  counter.join();
  EXPECT_EQ(counter.state(), ActorState::stopped);
  EXPECT_THAT(counter.stop_reason(), StatusIs(Code::internal, "asked to fail"));
}

TEST_F(ActorTest, ContextLostStopsTheActorAndQueuedRequestsGetContextLost) {
  auto device = spawn({.name = "gpu"});  // default policy: context_lost stops
  Gate gate;
  auto blocker = device.ask(Hold{.gate = &gate});
  gate.wait_until_entered();
  auto fault = device.ask(Fail{.code = Code::context_lost});
  auto queued = device.ask(Get{});
  gate.open();
  EXPECT_THAT(fault.wait(), StatusIs(Code::context_lost));
  EXPECT_THAT(queued.wait(), StatusIs(Code::context_lost, "not executed"));
  EXPECT_THAT(device.ask(Get{}).wait(), StatusIs(Code::context_lost));
}

TEST_F(ActorTest, EscalateReportsToTheSystemAndStops) {
  std::string escalated_actor;
  Status escalated;
  std::mutex mutex;
  system_.set_escalation_handler([&](const std::string& actor, const Status& failure) {
    std::lock_guard lock(mutex);
    escalated_actor = actor;
    escalated = failure;
  });
  auto counter = spawn({.name = "esc", .supervision = SupervisionPolicy().on(Code::unavailable, Directive::escalate)});
  EXPECT_THAT(counter.ask(Fail{.code = Code::unavailable}).wait(), StatusIs(Code::unavailable));
  counter.join();
  std::lock_guard lock(mutex);
  EXPECT_EQ(escalated_actor, "esc");
  EXPECT_THAT(escalated, StatusIs(Code::unavailable));
  EXPECT_EQ(counter.state(), ActorState::stopped);
}

TEST_F(ActorTest, AnExhaustedRestartBudgetEscalates) {
  std::atomic<int> escalations{0};
  system_.set_escalation_handler([&](const std::string&, const Status&) { ++escalations; });
  auto counter = spawn({.name = "budget",
                        .supervision = SupervisionPolicy().with_budget(
                            {.max_restarts = 2, .window = 10s, .initial_backoff = 1ms, .max_backoff = 4ms})});
  EXPECT_THAT(counter.ask(Fail{}).wait(), StatusIs(Code::internal));
  EXPECT_THAT(counter.ask(Fail{}).wait(), StatusIs(Code::internal));
  EXPECT_THAT(counter.ask(Fail{}).wait(), StatusIs(Code::internal));
  counter.join();
  EXPECT_EQ(counter.restart_count(), 2);
  EXPECT_EQ(escalations.load(), 1);
  EXPECT_THAT(counter.stop_reason(), StatusIs(Code::internal, "restart budget exhausted (2 restarts"));
}

TEST_F(ActorTest, RestartsBackOffExponentially) {
  auto counter = spawn({.supervision = SupervisionPolicy().with_budget(
                            {.max_restarts = 10, .initial_backoff = 8ms, .max_backoff = 1000ms})});
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) EXPECT_THAT(counter.ask(Fail{}).wait(), StatusIs(Code::internal));
  EXPECT_THAT(counter.ask(Get{}).wait(), IsOk());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 8ms + 16ms + 32ms);
  EXPECT_EQ(counter.restart_count(), 3);
}

TEST_F(ActorTest, AFactoryThatFailsAtStartIsReportedBySpawn) {
  auto ref = system_.spawn<CounterProtocol>(
      []() -> Result<std::unique_ptr<CounterProtocol::Handler>> { return unavailable("no GPU"); }, {.name = "bad"});
  EXPECT_THAT(ref, StatusIs(Code::unavailable, "no GPU"));
}

TEST(ActorShutdown, DrainRunsEveryQueuedRequest) {
  std::atomic<int> builds{0};
  Gate gate;
  std::vector<Future<std::int64_t>> futures;
  {
    System system;
    auto counter = *system.spawn<CounterProtocol>(counter_factory(&builds));
    ASSERT_THAT(counter.tell(Hold{.gate = &gate}), IsOk());
    gate.wait_until_entered();
    for (int i = 0; i < 50; ++i) futures.push_back(counter.ask(Add{.amount = 1}));
    counter.stop(ShutdownMode::drain);  // asked while all 50 are queued
    EXPECT_THAT(counter.ask(Get{}).wait(), StatusIs(Code::cancelled, "is stopped"));
    gate.open();
    system.shutdown(ShutdownMode::drain);
    EXPECT_EQ(counter.state(), ActorState::stopped);
  }
  for (int i = 0; i < 50; ++i) EXPECT_EQ(*futures[i].wait(), i + 1);
}

TEST(ActorShutdown, FailPendingAnswersEveryQueuedRequestCancelled) {
  std::atomic<int> builds{0};
  Gate gate;
  System system;
  auto counter = *system.spawn<CounterProtocol>(counter_factory(&builds), {.name = "victim"});
  auto busy = counter.ask(Hold{.gate = &gate});
  gate.wait_until_entered();
  std::vector<Future<std::int64_t>> futures;
  for (int i = 0; i < 50; ++i) futures.push_back(counter.ask(Add{.amount = 1}));
  counter.stop(ShutdownMode::fail_pending);  // asked while all 50 are queued
  gate.open();
  system.shutdown(ShutdownMode::fail_pending);
  EXPECT_THAT(busy.wait(), IsOk());
  for (auto& f : futures) EXPECT_THAT(f.wait(), StatusIs(Code::cancelled, "actor 'victim' stopped"));
  EXPECT_THAT(counter.ask(Get{}).wait(), StatusIs(Code::cancelled));
  EXPECT_THAT(system.spawn<CounterProtocol>(counter_factory(&builds)),
              StatusIs(Code::failed_precondition, "shut down"));
}

TEST(ActorShutdown, StoppingSomeActorsCancelsTheirQueueThenRunsTheirTeardownAndSparesTheRest) {
  std::atomic<int> builds{0};
  System system;
  auto make = [&]() -> Result<std::unique_ptr<CounterProtocol::Handler>> { return std::make_unique<Counter>(&builds); };
  auto stopped = *system.spawn<CounterProtocol>(make, {.name = "stopped"});
  auto spared = *system.spawn<CounterProtocol>(make, {.name = "spared"});
  Gate gate;
  auto busy = stopped.ask(Hold{.gate = &gate});
  gate.wait_until_entered();
  std::vector<Future<std::int64_t>> queued;
  for (int i = 0; i < 10; ++i) queued.push_back(stopped.ask(Add{.amount = 1}));

  Promise<ActorState> teardown;
  Future<ActorState> state_at_teardown = teardown.future();
  system.stop(
      std::vector{stopped}, cancelled("closed by the test"),
      [&, teardown = std::make_shared<Promise<ActorState>>(std::move(teardown))] { teardown->set(stopped.state()); });
  gate.open();
  EXPECT_EQ(*state_at_teardown.wait(), ActorState::stopped);
  EXPECT_THAT(busy.wait(), IsOk());
  for (auto& f : queued) EXPECT_THAT(f.wait(), StatusIs(Code::cancelled, "closed by the test"));
  EXPECT_THAT(stopped.ask(Get{}).wait(), StatusIs(Code::cancelled, "closed by the test"));
  EXPECT_EQ(system.actor_count(), 1u);
  EXPECT_EQ(*spared.ask(Add{.amount = 2}).wait(), 2);
}

TEST(ActorShutdown, ClientsRacingShutdownAreAllAnswered) {
  constexpr int kClients = 8, kPerClient = 300;
  std::atomic<int> builds{0};
  std::atomic<int> answered{0};
  std::latch every_client_answered_once(kClients);
  std::vector<std::thread> clients;
  {
    System system;
    auto counter = *system.spawn<CounterProtocol>(counter_factory(&builds));
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([&, counter] {
        for (int i = 0; i < kPerClient; ++i) {
          Result<std::int64_t> r = counter.ask(Add{.amount = 1}).wait();
          if (r.ok() || r.code() == Code::cancelled) ++answered;
          if (i == 0) every_client_answered_once.count_down();
        }
      });
    }
    every_client_answered_once.wait();  // shut down while every client is mid-stream
    system.shutdown(ShutdownMode::fail_pending);
    for (auto& t : clients) t.join();
  }
  EXPECT_EQ(answered.load(), kClients * kPerClient);
}

Future<std::int64_t> add_twice(ActorRef<CounterProtocol> counter) {
  Result<std::int64_t> first = co_await counter.ask(Add{.amount = 1});
  if (!first) co_return first.status();
  co_return co_await counter.ask(Add{.amount = *first + 1});
}

TEST_F(ActorTest, CoAwaitChainsRequestsWithoutBlocking) {
  auto counter = spawn();
  EXPECT_EQ(*add_twice(counter).wait(), 3);
}

// Answers Add only once its mailbox is empty, all held replies together, as a CUDA stream answers a burst of
// requests with one completion event (Note [Bursts] in cuda_stream.hpp).
struct BurstCounter final : CounterProtocol::Handler {
  explicit BurstCounter(std::vector<std::size_t>* bursts) : bursts(bursts) {}
  Status dispatch(Add& r, Promise<std::int64_t>& reply) override {
    held.emplace_back(std::move(reply), total += r.amount);
    return Status();
  }
  Result<std::int64_t> handle(Add& r) override { return total += r.amount; }
  Result<std::int64_t> handle(Get&) override { return total; }
  Result<Done> handle(Fail& r) override { return Status(r.code, "asked to fail"); }
  Result<Done> handle(Hold& r) override {
    r.gate->pass();
    return Done{};
  }
  Result<std::thread::id> handle(WhichThread&) override { return std::this_thread::get_id(); }
  [[nodiscard]] bool owes_replies() const noexcept override { return !held.empty(); }
  void mailbox_empty() override {
    if (held.empty()) return;
    bursts->push_back(held.size());  // before the replies: a test reads it once its futures are ready
    for (auto& [reply, value] : held) reply.set(value);
    held.clear();
  }
  std::vector<std::size_t>* bursts;
  std::vector<std::pair<Promise<std::int64_t>, std::int64_t>> held;
  std::int64_t total = 0;
};

TEST(ActorBursts, RequestsQueuedTogetherAreAnsweredWhenTheMailboxEmpties) {
  std::vector<std::size_t> bursts;
  System system;
  auto spawned = system.spawn<CounterProtocol>(
      [&]() -> Result<std::unique_ptr<CounterProtocol::Handler>> { return std::make_unique<BurstCounter>(&bursts); },
      {.name = "bursts"});
  ASSERT_THAT(spawned, IsOk());
  ActorRef<CounterProtocol> counter = *spawned;
  Gate gate;
  auto busy = counter.ask(Hold{.gate = &gate});
  gate.wait_until_entered();  // the five Adds queue behind Hold
  std::vector<Future<std::int64_t>> queued;
  for (int i = 0; i < 5; ++i) queued.push_back(counter.ask(Add{.amount = 1}));
  gate.open();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(*queued[i].wait(), i + 1);
  EXPECT_EQ(bursts, std::vector<std::size_t>{5});
  // A lone request is its own burst: answered as soon as it has run.
  EXPECT_EQ(*counter.ask(Add{.amount = 10}).wait(), 15);
  EXPECT_EQ(bursts, (std::vector<std::size_t>{5, 1}));
  EXPECT_THAT(busy.wait(), IsOk());
}

}  // namespace
}  // namespace accel

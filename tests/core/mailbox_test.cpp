#include "accel/core/mailbox.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;
using testing::IsOk;
using testing::StatusIs;

// Waits for a condition that other threads bring about; false if it did not come within 10 s.
[[nodiscard]] bool eventually(const std::function<bool()>& condition) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::yield();
  }
  return true;
}

// Whether `condition` holds all through `window`: the way to see that something does not happen.
[[nodiscard]] bool throughout(std::chrono::milliseconds window, const std::function<bool()>& condition) {
  const auto end = std::chrono::steady_clock::now() + window;
  while (std::chrono::steady_clock::now() < end) {
    if (!condition()) return false;
    std::this_thread::yield();
  }
  return condition();
}

void fill(Mailbox<int>& box) {
  for (std::size_t i = 0; i < box.capacity(); ++i) {
    int v = static_cast<int>(i);
    ASSERT_THAT(box.try_push(v), IsOk());
  }
}

// Producer threads that are joined however a test ends: a failed assertion closes the mailbox first, which
// releases any producer still blocked in it.
template <class T>
class Producers {
 public:
  explicit Producers(Mailbox<T>& box) : box_(box) {}
  Producers(const Producers&) = delete;
  Producers& operator=(const Producers&) = delete;
  ~Producers() {
    if (threads_.empty()) return;
    box_.close();
    join();
  }
  void start(std::function<void()> body) { threads_.emplace_back(std::move(body)); }
  void join() {
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  Mailbox<T>& box_;
  std::vector<std::thread> threads_;
};

TEST(Mailbox, DeliversInFifoOrder) {
  Mailbox<int> box({.capacity = 8});
  for (int i = 0; i < 8; ++i) {
    int v = i;
    ASSERT_THAT(box.push(v), IsOk());
  }
  for (int i = 0; i < 8; ++i) EXPECT_EQ(*box.try_pop(), i);
  EXPECT_FALSE(box.try_pop());
}

TEST(Mailbox, RejectPolicyRefusesWhenFullAndLeavesTheItem) {
  Mailbox<std::unique_ptr<int>> box({.capacity = 2, .overflow = Overflow::reject}, "cpu:0");
  for (int i = 0; i < 2; ++i) {
    auto item = std::make_unique<int>(i);
    ASSERT_THAT(box.push(item), IsOk());
  }
  auto extra = std::make_unique<int>(99);
  EXPECT_THAT(box.push(extra), StatusIs(Code::resource_exhausted, "mailbox of 'cpu:0' is full (capacity 2"));
  ASSERT_NE(extra, nullptr);
  EXPECT_EQ(*extra, 99);
}

TEST(Mailbox, BlockPolicyWaitsForRoom) {
  Mailbox<int> box({.capacity = 2, .overflow = Overflow::block});
  fill(box);
  std::atomic<bool> pushed{false};
  Producers<int> producers(box);
  producers.start([&] {
    int v = 2;
    EXPECT_THAT(box.push(v), IsOk());
    pushed = true;
  });
  ASSERT_TRUE(eventually([&] { return box.blocked_producers() == 1; }));
  EXPECT_FALSE(pushed);
  EXPECT_EQ(*box.try_pop(), 0);
  producers.join();
  EXPECT_TRUE(pushed);
  int full = 3;
  EXPECT_THAT(box.try_push(full), StatusIs(Code::resource_exhausted));  // try_push never blocks
}

TEST(Mailbox, CloseRefusesNewPushesAndReleasesEveryBlockedProducer) {
  constexpr int kBlocked = 32;
  Mailbox<int> box({.capacity = 2, .overflow = Overflow::block});
  fill(box);
  std::atomic<int> refused{0};
  Producers<int> producers(box);
  for (int p = 0; p < kBlocked; ++p) {
    producers.start([&] {
      int v = 7;
      if (box.push(v).code() == Code::cancelled) ++refused;
    });
  }
  ASSERT_TRUE(eventually([&] { return box.blocked_producers() == kBlocked; }));
  box.close();
  producers.join();
  EXPECT_EQ(refused.load(), kBlocked);
  EXPECT_EQ(box.blocked_producers(), 0);
  int late = 1;
  EXPECT_THAT(box.push(late), StatusIs(Code::cancelled, "closed"));
  EXPECT_EQ(*box.try_pop(), 0);  // what was queued before close stays
  EXPECT_EQ(*box.try_pop(), 1);
  EXPECT_FALSE(box.try_pop());
}

// Waking every blocked producer on every pop made 64 producers on a full mailbox spend the consumer's time on
// wake-ups that found no room. A pop must wake one of them; the rest sleep on until there is room for them.
TEST(Mailbox, APopWakesOneBlockedProducerRatherThanAll) {
  constexpr int kBlocked = 32;
  Mailbox<int> box({.capacity = 4, .overflow = Overflow::block});
  fill(box);
  Producers<int> producers(box);
  for (int p = 0; p < kBlocked; ++p) {
    producers.start([&] {
      int v = 100;
      EXPECT_THAT(box.push(v), IsOk());
    });
  }
  ASSERT_TRUE(eventually([&] { return box.blocked_producers() == kBlocked; }));
  ASSERT_TRUE(box.try_pop());
  ASSERT_TRUE(eventually([&] { return box.size_approx() == box.capacity(); }));
  // Had the pop woken all 32, the 31 that found no room would show up here within a few milliseconds; the
  // slack of one is for a spurious wake-up.
  EXPECT_TRUE(throughout(50ms, [&] { return box.producer_wake_ups() <= 2; })) << box.producer_wake_ups();

  for (int still_blocked = kBlocked - 1; still_blocked > 0; --still_blocked) {
    ASSERT_TRUE(box.try_pop());
    ASSERT_TRUE(eventually([&] { return box.size_approx() == box.capacity(); })) << still_blocked;
  }
  producers.join();
  EXPECT_LE(box.producer_wake_ups(), 2u * kBlocked);
}

TEST(Mailbox, PopWaitReturnsOnWakeAndOnDeadline) {
  Mailbox<int> box({.capacity = 4, .spin = 0us});
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(box.pop_wait(start + 5ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 5ms);
  std::thread waker([&] {
    std::this_thread::sleep_for(5ms);
    box.wake();
  });
  EXPECT_FALSE(box.pop_wait());
  waker.join();
}

// Whether a consumer has stopped calling its predicate: unchanged over 20 ms.
[[nodiscard]] bool settles(const std::atomic<int>& looks) {
  return eventually([&] {
    const int before = looks.load();
    std::this_thread::sleep_for(20ms);
    return looks.load() == before;
  });
}

TEST(Mailbox, ConsumerThatOwesRepliesStaysAwakeUntilTheyAreGiven) {
  Mailbox<int> box({.capacity = 4, .spin = 0us, .stay_awake = 60s});
  std::atomic<bool> owes{true};
  std::atomic<int> looks{0};
  std::optional<int> received;
  std::thread consumer([&] {
    received = box.pop_wait(std::chrono::steady_clock::time_point::max(), [&] {
      ++looks;
      return owes.load();
    });
  });
  // Far past its spin of zero, it still looks: it is awake.
  ASSERT_TRUE(eventually([&] { return looks.load() > 1000; }));
  owes = false;
  ASSERT_TRUE(settles(looks));
  int item = 7;
  ASSERT_THAT(box.push(item), IsOk());
  consumer.join();
  EXPECT_EQ(received, 7);
}

TEST(Mailbox, ConsumerThatOwesRepliesSleepsAfterStayAwake) {
  Mailbox<int> box({.capacity = 4, .spin = 0us, .stay_awake = 5ms});
  std::atomic<int> looks{0};
  std::optional<int> received;
  std::thread consumer([&] {
    received = box.pop_wait(std::chrono::steady_clock::time_point::max(), [&] {
      ++looks;
      return true;
    });
  });
  ASSERT_TRUE(eventually([&] { return looks.load() > 0; }));
  ASSERT_TRUE(settles(looks));
  int item = 8;
  ASSERT_THAT(box.push(item), IsOk());
  consumer.join();
  EXPECT_EQ(received, 8);
}

// An actor that watches its own deferred work (Protocol's look_after_replies): counts the looks and hand-overs.
struct CountingIdle {
  std::atomic<bool> owes{false};
  std::atomic<int> looks{0};
  std::atomic<int> hand_overs{0};
  bool owes_replies() const { return owes.load(); }
  void look() { ++looks; }
  void hand_over() { ++hand_overs; }
};

TEST(Mailbox, IdleConsumerLooksWhileItSpinsAndHandsOverOnceAnItemComes) {
  Mailbox<int> box({.capacity = 4, .spin = 60s});
  CountingIdle idle;
  std::optional<int> received;
  std::thread consumer([&] { received = box.pop_wait(std::chrono::steady_clock::time_point::max(), idle); });
  // Every look, not every 64th: a watched reply is answered within a look of its work finishing.
  ASSERT_TRUE(eventually([&] { return idle.looks.load() > 1000; }));
  EXPECT_EQ(idle.hand_overs.load(), 0);
  int item = 3;
  ASSERT_THAT(box.push(item), IsOk());
  consumer.join();
  EXPECT_EQ(received, 3);
  EXPECT_EQ(idle.hand_overs.load(), 1);
}

TEST(Mailbox, IdleConsumerHandsOverBeforeItSleeps) {
  Mailbox<int> box({.capacity = 4, .spin = 0us, .stay_awake = 5ms});
  CountingIdle idle;
  idle.owes = true;  // awake for stay_awake, then asleep all the same
  std::optional<int> received;
  std::thread consumer([&] { received = box.pop_wait(std::chrono::steady_clock::time_point::max(), idle); });
  ASSERT_TRUE(eventually([&] { return idle.hand_overs.load() == 1; }));
  ASSERT_TRUE(settles(idle.looks));  // asleep: it looks no more
  int item = 4;
  ASSERT_THAT(box.push(item), IsOk());
  consumer.join();
  EXPECT_EQ(received, 4);
  EXPECT_EQ(idle.hand_overs.load(), 1);  // woken by the item, it had nothing left to give
}

TEST(Mailbox, IdleConsumerHandsOverWhenWoken) {
  Mailbox<int> box({.capacity = 4, .spin = 60s});
  CountingIdle idle;
  std::optional<int> received = 0;
  std::thread consumer([&] { received = box.pop_wait(std::chrono::steady_clock::time_point::max(), idle); });
  ASSERT_TRUE(eventually([&] { return idle.looks.load() > 0; }));
  box.wake();
  consumer.join();
  EXPECT_FALSE(received);
  EXPECT_EQ(idle.hand_overs.load(), 1);
}

// Many producers, one sleeping-and-waking consumer: every item arrives exactly once, each producer's in order.
struct Contention {
  int producers;
  std::size_t capacity;
  int per_producer;
};

class MailboxUnderContention : public ::testing::TestWithParam<Contention> {};

TEST_P(MailboxUnderContention, BlockedProducersLoseNothingAndDeliverEachItemOnceInOrder) {
  const Contention c = GetParam();
  Mailbox<std::pair<int, int>> box({.capacity = c.capacity, .overflow = Overflow::block, .spin = 1us});
  Producers<std::pair<int, int>> producers(box);
  for (int p = 0; p < c.producers; ++p) {
    producers.start([&, p] {
      for (int i = 0; i < c.per_producer; ++i) {
        std::pair<int, int> item{p, i};
        ASSERT_THAT(box.push(item), IsOk());
      }
    });
  }
  std::vector<int> next(c.producers, 0);
  for (int received = 0; received < c.producers * c.per_producer;) {
    auto item = box.pop_wait(std::chrono::steady_clock::now() + 10s);
    ASSERT_TRUE(item.has_value()) << "consumer starved after " << received << " items";
    ASSERT_EQ(item->second, next[item->first]++) << "producer " << item->first;
    ++received;
  }
  producers.join();
  EXPECT_FALSE(box.try_pop());
  EXPECT_EQ(box.blocked_producers(), 0);
}

INSTANTIATE_TEST_SUITE_P(Mailbox, MailboxUnderContention,
                         ::testing::Values(Contention{.producers = 8, .capacity = 64, .per_producer = 5000},
                                           Contention{.producers = 64, .capacity = 2, .per_producer = 300},
                                           Contention{.producers = 64, .capacity = 1024, .per_producer = 2000}));

// Producers blocked on a full mailbox while it closes under them: each push is either delivered or refused
// `cancelled`, never lost and never stuck.
TEST(Mailbox, CloseUnderContentionAnswersEveryBlockedPush) {
  constexpr int kProducers = 64, kPerProducer = 200;
  Mailbox<int> box({.capacity = 8, .overflow = Overflow::block, .spin = 1us});
  std::atomic<int> delivered_pushes{0}, refused_pushes{0};
  Producers<int> producers(box);
  for (int p = 0; p < kProducers; ++p) {
    producers.start([&] {
      for (int i = 0; i < kPerProducer; ++i) {
        int v = i;
        Status pushed = box.push(v);
        if (pushed.ok()) {
          ++delivered_pushes;
        } else {
          EXPECT_THAT(pushed, StatusIs(Code::cancelled));
          ++refused_pushes;
        }
      }
    });
  }
  int popped = 0;
  while (popped < kProducers * kPerProducer / 2) {
    if (box.pop_wait(std::chrono::steady_clock::now() + 10s)) ++popped;
  }
  ASSERT_TRUE(eventually([&] { return box.blocked_producers() > 0; }));
  box.close();
  producers.join();
  while (box.try_pop()) ++popped;
  EXPECT_EQ(delivered_pushes.load(), popped);
  EXPECT_EQ(delivered_pushes.load() + refused_pushes.load(), kProducers * kPerProducer);
}

}  // namespace
}  // namespace accel

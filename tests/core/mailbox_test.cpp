#include "accel/core/mailbox.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;
using testing::IsOk;
using testing::StatusIs;

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
  for (int i = 0; i < 2; ++i) {
    int v = i;
    ASSERT_THAT(box.push(v), IsOk());
  }
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    int v = 2;
    EXPECT_THAT(box.push(v), IsOk());
    pushed = true;
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(pushed);
  EXPECT_EQ(*box.try_pop(), 0);
  producer.join();
  EXPECT_TRUE(pushed);
  int full = 3;
  EXPECT_THAT(box.try_push(full), StatusIs(Code::resource_exhausted));  // try_push never blocks
}

TEST(Mailbox, CloseRefusesNewPushesAndReleasesBlockedProducers) {
  Mailbox<int> box({.capacity = 2, .overflow = Overflow::block});
  for (int i = 0; i < 2; ++i) {
    int v = i;
    ASSERT_THAT(box.push(v), IsOk());
  }
  std::thread blocked([&] {
    int v = 7;
    EXPECT_THAT(box.push(v), StatusIs(Code::cancelled, "closed"));
  });
  std::this_thread::sleep_for(10ms);
  box.close();
  blocked.join();
  int late = 1;
  EXPECT_THAT(box.push(late), StatusIs(Code::cancelled));
  EXPECT_EQ(*box.try_pop(), 0);  // what was queued before close stays
  EXPECT_EQ(*box.try_pop(), 1);
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

// Many producers, one sleeping-and-waking consumer: every item arrives exactly once, each producer's in order.
TEST(Mailbox, ManyProducersOneConsumerLoseNothing) {
  constexpr int kProducers = 8, kPerProducer = 5000;
  Mailbox<std::pair<int, int>> box({.capacity = 64, .overflow = Overflow::block, .spin = 1us});
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        std::pair<int, int> item{p, i};
        ASSERT_THAT(box.push(item), IsOk());
      }
    });
  }
  std::vector<int> next(kProducers, 0);
  for (int received = 0; received < kProducers * kPerProducer;) {
    auto item = box.pop_wait(std::chrono::steady_clock::now() + 5s);
    ASSERT_TRUE(item.has_value()) << "consumer starved after " << received << " items";
    ASSERT_EQ(item->second, next[item->first]++);
    ++received;
  }
  for (auto& t : producers) t.join();
  EXPECT_FALSE(box.try_pop());
}

}  // namespace
}  // namespace accel

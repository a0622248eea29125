// The channel's rings across a worker's death: a producer killed inside publish() (its slot's sequence written, the
// head not yet advanced) leaves the reply ring's head one behind what the client has read; until the head catches up,
// the next worker finds the ring full and no reply ever arrives (the likely cause of a wedge seen under TSan).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include "accel/core/waiting.hpp"
#include "device/isolated/channel.hpp"
#include "testing/status_matchers.hpp"

namespace accel::device::isolated {
namespace {

using testing::IsOk;

// A worker's mapping of the client's channel, as a spawned worker attaches to the descriptors it inherits.
Result<Channel> attach_worker(const Channel& client) {
  return Channel::attach(::dup(client.memfd()), ::dup(client.worker_wake_fd()), ::dup(client.client_wake_fd()));
}

void write_reply(Ring& replies, std::uint64_t value) {
  std::byte* slot = replies.try_claim();
  ASSERT_NE(slot, nullptr);
  std::memcpy(slot, &value, sizeof value);
  replies.publish();
}

std::uint64_t read_reply(Ring& replies) {
  const std::byte* slot = replies.peek();
  EXPECT_NE(slot, nullptr);
  std::uint64_t value = 0;
  if (slot != nullptr) std::memcpy(&value, slot, sizeof value);
  replies.release();
  return value;
}

TEST(IsolatedChannel, ANewWorkerRepliesAfterItsPredecessorDiedInsidePublish) {
  Result<Channel> client = Channel::create("channel-test", 1 << 16);
  ASSERT_THAT(client, IsOk());
  {
    Result<Channel> lost = attach_worker(*client);
    ASSERT_THAT(lost, IsOk());
    write_reply(lost->replies(), 7);
    write_reply(lost->replies(), 8);
  }
  // The second publish's head store never happened: the state a kill between its two stores leaves.
  RingControl& control = client->header().replies;
  control.head.store(control.head.load() - 1);
  EXPECT_EQ(read_reply(client->replies()), 7u);
  EXPECT_EQ(read_reply(client->replies()), 8u);  // the slot was marked written: the client reads it
  EXPECT_TRUE(client->replies().empty());

  client->replies().recover_producer();  // what the supervisor does once the lost worker is reaped
  EXPECT_EQ(control.head.load(), control.tail.load());
  Result<Channel> next = attach_worker(*client);
  ASSERT_THAT(next, IsOk());
  for (std::uint64_t value = 9; value < 9 + 2 * kReplySlots; ++value) {  // round the ring twice
    write_reply(next->replies(), value);
    ASSERT_EQ(read_reply(client->replies()), value);
  }
}

TEST(IsolatedChannel, RecoveringAProducerThatDiedBetweenPublishesChangesNothing) {
  Result<Channel> client = Channel::create("channel-test", 1 << 16);
  ASSERT_THAT(client, IsOk());
  Result<Channel> lost = attach_worker(*client);
  ASSERT_THAT(lost, IsOk());
  write_reply(lost->replies(), 1);
  std::byte* unpublished = lost->replies().try_claim();  // claimed and written, never published
  ASSERT_NE(unpublished, nullptr);
  std::memset(unpublished, 0xff, 8);
  const std::uint64_t head = client->header().replies.head.load();
  client->replies().recover_producer();
  EXPECT_EQ(client->header().replies.head.load(), head);
  EXPECT_EQ(read_reply(client->replies()), 1u);
  EXPECT_TRUE(client->replies().empty());
}

// While a CPU device has claimed the cores (accel/core/waiting.hpp), a waiter on an empty ring sleeps where its spin
// would start yielding: the side of an isolated CPU device that waits must not stay runnable beside the side that
// computes.
TEST(IsolatedChannel, AWaiterSleepsWhereItsSpinWouldYieldWhileTheCoresAreClaimed) {
  Result<Channel> client = Channel::create("channel-test", 1 << 16);
  ASSERT_THAT(client, IsOk());
  const auto wait_on_empty = [&] {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(client->replies().wait(std::chrono::milliseconds(300), std::chrono::milliseconds(10)));
    return std::chrono::steady_clock::now() - start;
  };
  {
    const detail::CoreClaim claim;
    EXPECT_LT(wait_on_empty(), std::chrono::milliseconds(150));  // 20 µs of spin, then 10 ms asleep
  }
  EXPECT_GE(wait_on_empty(), std::chrono::milliseconds(300));  // unclaimed: the whole spin
}

// What a waiter that watches work of its own saw: the isolated worker's serving loop (worker.cpp's StreamsIdle).
struct CountingIdle {
  int looks = 0;
  int hand_overs = 0;
  int looks_at_hand_over = -1;
  bool owes_replies() const { return true; }
  void look() { ++looks; }
  void hand_over() {
    ++hand_overs;
    looks_at_hand_over = looks;
  }
};

TEST(IsolatedChannel, AnIdleWaiterLooksWhileItSpinsAndHandsOverOnceBeforeItSleeps) {
  Result<Channel> client = Channel::create("channel-test", 1 << 16);
  ASSERT_THAT(client, IsOk());
  CountingIdle idle;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(client->replies().wait(std::chrono::milliseconds(2), std::chrono::milliseconds(5), idle));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(5));  // it slept: nothing woke it
  EXPECT_GT(idle.looks, 64);  // every poll of the spin, not once per reading of the clock
  EXPECT_EQ(idle.hand_overs, 1);
  EXPECT_EQ(idle.looks_at_hand_over, idle.looks);  // handed over before the sleep, with no look after it
}

TEST(IsolatedChannel, AnIdleWaiterHandsOverOnceWhenAMessageComes) {
  Result<Channel> client = Channel::create("channel-test", 1 << 16);
  ASSERT_THAT(client, IsOk());
  Result<Channel> worker = attach_worker(*client);
  ASSERT_THAT(worker, IsOk());
  CountingIdle idle;
  std::thread producer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    write_reply(worker->replies(), 42);
  });
  EXPECT_TRUE(client->replies().wait(std::chrono::seconds(10), std::chrono::seconds(10), idle));
  producer.join();
  EXPECT_GT(idle.looks, 0);
  EXPECT_EQ(idle.hand_overs, 1);
  EXPECT_EQ(read_reply(client->replies()), 42u);
}

}  // namespace
}  // namespace accel::device::isolated

// Meetings that join two devices' orders (JoinOrders, src/device/order_meeting.hpp), on two in-process CPU devices:
// what copies between GPUs stand on (cuda_peer_copy_test runs them there).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "device/order_meeting.hpp"
#include "testing/device_pair.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::StatusIs;

// Whether `future` has no answer after a while (it stays valid to be waited for again).
template <class T>
bool still_waiting(Future<T>& future) {
  return future.wait_for(std::chrono::milliseconds(30)).status().code() == Code::deadline_exceeded;
}

class OrderMeetingTest : public ::testing::Test, protected testing::DevicePair {
 protected:
  void SetUp() override { open_pair({.kind = DeviceKind::cpu}, {.kind = DeviceKind::cpu}); }

  static JoinOrders part(const device::OrderMeeting& meeting, JoinRole role) {
    return {.meeting = meeting.number(), .role = role};
  }
};

TEST_F(OrderMeetingTest, TheHolderTakesNothingMoreUntilTheOtherSideReleasesIt) {
  std::shared_ptr<device::OrderMeeting> meeting = device::open_meeting();
  Future<Done> held = a().ask(part(*meeting, JoinRole::hold));
  Future<Fence> behind = a().record_fence();
  EXPECT_TRUE(still_waiting(behind));
  ASSERT_THAT(b().ask(part(*meeting, JoinRole::meet)).wait(), IsOk());
  EXPECT_TRUE(still_waiting(behind));
  ASSERT_THAT(b().ask(part(*meeting, JoinRole::release)).wait(), IsOk());
  EXPECT_THAT(held.wait(), IsOk());
  EXPECT_THAT(behind.wait(), IsOk());
}

TEST_F(OrderMeetingTest, TheMeetingSideGoesOnOnlyOnceTheHolderArrived) {
  std::shared_ptr<device::OrderMeeting> meeting = device::open_meeting();
  Future<Done> met = b().ask(part(*meeting, JoinRole::meet));
  Future<Fence> behind = b().record_fence();
  EXPECT_TRUE(still_waiting(met));
  EXPECT_TRUE(still_waiting(behind));
  Future<Done> held = a().ask(part(*meeting, JoinRole::hold));
  EXPECT_THAT(met.wait(), IsOk());
  EXPECT_THAT(behind.wait(), IsOk());
  ASSERT_THAT(b().ask(part(*meeting, JoinRole::release)).wait(), IsOk());
  EXPECT_THAT(held.wait(), IsOk());
}

// A part that will never run (its device closed) abandons the meeting: the other side answers cancelled and goes on.
TEST_F(OrderMeetingTest, AnAbandonedMeetingLetsBothSidesGoOn) {
  std::shared_ptr<device::OrderMeeting> meeting = device::open_meeting();
  Future<Done> held = a().ask(part(*meeting, JoinRole::hold));
  Future<Done> met = b().ask(part(*meeting, JoinRole::meet));
  ASSERT_THAT(met.wait(), IsOk());
  EXPECT_TRUE(still_waiting(held));
  meeting->abandon();
  EXPECT_THAT(held.wait(), StatusIs(Code::cancelled));
  EXPECT_THAT(a().record_fence().wait(), IsOk());

  std::shared_ptr<device::OrderMeeting> unmet = device::open_meeting();
  Future<Done> waiting = b().ask(part(*unmet, JoinRole::meet));
  unmet->abandon();
  EXPECT_THAT(waiting.wait(), StatusIs(Code::cancelled));
}

TEST_F(OrderMeetingTest, RefusesMeetingsNotOpenAndRolesThatAreNone) {
  std::uint64_t closed = 0;
  {
    std::shared_ptr<device::OrderMeeting> meeting = device::open_meeting();
    closed = meeting->number();
  }
  EXPECT_THAT(a().ask(JoinOrders{.meeting = closed, .role = JoinRole::hold}).wait(),
              StatusIs(Code::invalid_argument, "no meeting"));
  std::shared_ptr<device::OrderMeeting> meeting = device::open_meeting();
  EXPECT_THAT(a().ask(JoinOrders{.meeting = meeting->number(), .role = static_cast<JoinRole>(9)}).wait(),
              StatusIs(Code::invalid_argument, "role 9"));
}

TEST(OrderMeetingIsolated, AnIsolatedDeviceRefusesToJoin) {
  System system;
  Result<Device> isolated = Device::open(system, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  std::shared_ptr<device::OrderMeeting> meeting = device::open_meeting();
  EXPECT_THAT(isolated->ask(JoinOrders{.meeting = meeting->number(), .role = JoinRole::hold}).wait(),
              StatusIs(Code::not_supported, "worker process"));
}

}  // namespace
}  // namespace accel

// Closing one device (Device::close, or dropping its last copy): its actors stop, what they had queued is
// answered, later requests are refused by name, buffers may outlive it, and an isolated device's worker process
// and descriptors are gone. On the CPU device, in process and isolated; the CUDA side is in cuda_device_test.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "accel/core/waiting.hpp"
#include "accel/device/device.hpp"
#include "testing/process_probe.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;
using testing::IsOk;
using testing::StatusIs;

DeviceOptions isolated_cpu() { return DeviceOptions{.kind = DeviceKind::cpu, .isolation = Isolation::worker_process}; }

// Keeps the in-process CPU device's one thread busy, in a continuation it runs, until release(): requests sent
// meanwhile queue behind it.
class Blocker {
 public:
  explicit Blocker(const Device& dev) {
    const std::thread::id caller = std::this_thread::get_id();
    while (true) {
      // The continuation runs on the device's thread unless the reply came before then(): then, here, at once.
      Future<bool> held = dev.info().then([this, caller](Result<DeviceInfo>) {
        if (std::this_thread::get_id() == caller) return false;
        while (!released_.load()) std::this_thread::sleep_for(1ms);
        return true;
      });
      if (!held.ready()) {
        held_ = std::move(held);
        return;
      }
    }
  }
  void release() {
    released_.store(true);
    EXPECT_THAT(held_.wait(), IsOk());
  }

 private:
  std::atomic<bool> released_{false};
  Future<bool> held_;
};

TEST(DeviceCloseTest, QueuedRequestsAreCancelledAndLaterOnesRefusedByName) {
  System system;
  Device dev = *Device::open(system, {});
  Blocker blocker(dev);
  std::vector<Future<DeviceInfo>> queued;
  for (int i = 0; i < 8; ++i) queued.push_back(dev.info());
  Future<Done> closed = dev.close();
  blocker.release();
  ASSERT_THAT(closed.wait(), IsOk());
  for (Future<DeviceInfo>& request : queued) EXPECT_THAT(request.wait(), StatusIs(Code::cancelled, "cpu:0 was closed"));

  EXPECT_THAT(dev.info().wait(), StatusIs(Code::failed_precondition, "cpu:0 is closed"));
  EXPECT_THAT(dev.allocate<float>(4).wait(), StatusIs(Code::failed_precondition, "cpu:0 is closed"));
  EXPECT_THAT(dev.health(), StatusIs(Code::failed_precondition, "cpu:0 is closed"));
  EXPECT_EQ(system.actor_count(), 0u);
  EXPECT_THAT(dev.close().wait(), IsOk());  // again: nothing left to do
}

// A closed device refuses a new stream as it refuses every request, by naming the close, on every device kind:
// "the CPU device has no streams" would send the caller looking for the wrong cause.
TEST(DeviceCloseTest, OpenStreamOnAClosedCpuDeviceIsAFailedPreconditionNamingTheClose) {
  System system;
  Device dev = *Device::open(system, {});
  EXPECT_THAT(dev.open_stream(), StatusIs(Code::not_supported, "no streams"));  // open: the CPU has none
  ASSERT_THAT(dev.close().wait(), IsOk());
  EXPECT_THAT(dev.open_stream(), StatusIs(Code::failed_precondition, "cpu:0 is closed"));
}

TEST(DeviceCloseTest, OpenStreamOnAClosedIsolatedCpuDeviceIsAFailedPreconditionNamingTheClose) {
  System system;
  Device dev = *Device::open(system, isolated_cpu());
  ASSERT_THAT(dev.close().wait(), IsOk());
  EXPECT_THAT(dev.open_stream(), StatusIs(Code::failed_precondition, "cpu:0 is closed"));
}

TEST(DeviceCloseTest, BuffersHeldPastTheCloseAreReleasedHarmlessly) {
  System system;
  std::optional<Buffer<float>> outlives_device;
  {
    Device dev = *Device::open(system, {});
    Buffer<float> buffer = *dev.allocate<float>(16).wait();
    outlives_device = *dev.allocate<float>(16).wait();
    ASSERT_THAT(dev.close().wait(), IsOk());
    EXPECT_THAT(dev.free(buffer).wait(), StatusIs(Code::failed_precondition, "closed"));
  }                         // `buffer` released while the device is closed
  outlives_device.reset();  // and this one after its last Device went away
}

// An open CPU device's threads (or its worker's) use every core, so the process's waiters sleep rather than yield
// after their spin while it is open (accel/core/waiting.hpp); once it is closed and its actor gone, the cores are
// free again.
void expect_cores_claimed_until_closed(const DeviceOptions& options) {
  ASSERT_FALSE(detail::cores_claimed());
  {
    System system;
    Device dev = *Device::open(system, options);
    ASSERT_THAT(dev.info().wait(), IsOk());
    EXPECT_TRUE(detail::cores_claimed());
    ASSERT_THAT(dev.close().wait(), IsOk());
  }
  EXPECT_FALSE(detail::cores_claimed());
}

TEST(DeviceCloseTest, AnOpenCpuDeviceClaimsTheCoresUntilItIsClosed) { expect_cores_claimed_until_closed({}); }

TEST(DeviceCloseTest, AnIsolatedCpuDeviceClaimsTheCoresItsWorkerUsesUntilItIsClosed) {
  expect_cores_claimed_until_closed(isolated_cpu());
}

TEST(DeviceCloseTest, DroppingTheLastCopyClosesTheDevice) {
  System system;
  {
    Device dev = *Device::open(system, {});
    Device copy = dev;
    EXPECT_EQ(system.actor_count(), 1u);
  }
  EXPECT_EQ(system.actor_count(), 0u);
}

// A Device may outlive its System: its last copy may go away on another thread while the System is being
// destroyed (an isolated device's monitor thread does, in a continuation). Under ASan/TSan this touched the freed
// System before the System kept its state behind a pointer the Device holds weakly.
TEST(DeviceCloseTest, TheLastCopyMayGoAwayOnAnotherThreadWhileItsSystemIsDestroyed) {
  for (int round = 0; round < 200; ++round) {
    auto system = std::make_unique<System>();
    std::optional<Device> dev = *Device::open(*system, {});
    std::atomic<bool> go{false};
    std::thread dropper([&] {
      while (!go.load()) std::this_thread::yield();
      // The device refuses requests once the System's shutdown has stopped its actor; from there, drop the
      // Device at points spread over the rest of the System's destruction (never touching the System itself).
      while (dev->info().wait().ok()) std::this_thread::yield();
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(round % 50 * 4);
      while (std::chrono::steady_clock::now() < until) {
      }
      dev.reset();
    });
    go.store(true);
    system.reset();
    dropper.join();
  }
}

// A close from a continuation on the device's own thread cannot wait for that thread; it still completes.
TEST(DeviceCloseTest, ACloseFromTheDevicesOwnThreadCompletes) {
  System system;
  Device dev = *Device::open(system, {});
  Future<Done> closed_there = dev.info().then([dev](Result<DeviceInfo>) {
    (void)dev.close();
    return Done{};
  });
  ASSERT_THAT(closed_there.wait(), IsOk());
  EXPECT_THAT(dev.close().wait(), IsOk());
  EXPECT_THAT(dev.info().wait(), StatusIs(Code::failed_precondition));
}

TEST(DeviceCloseTest, ClosingAnIsolatedDeviceEndsItsWorkerAndLeavesNoDescriptor) {
  const int fds_before = testing::count_open_fds();
  System system;
  {
    Device dev = *Device::open(system, isolated_cpu());
    const pid_t worker = dev.info().wait()->worker_pid;
    ASSERT_GT(worker, 0);
    Buffer<float> held = *dev.allocate<float>(64).wait();
    std::vector<Future<DeviceInfo>> in_flight;
    for (int i = 0; i < 64; ++i) in_flight.push_back(dev.info());

    ASSERT_THAT(dev.close().wait(), IsOk());
    EXPECT_TRUE(testing::process_gone(worker));
    EXPECT_TRUE(testing::live_children().empty());
    for (Future<DeviceInfo>& request : in_flight) {
      Result<DeviceInfo> answer = request.wait();
      if (!answer.ok()) {
        EXPECT_THAT(answer, StatusIs(Code::cancelled, "closed"));
      }
    }
    EXPECT_THAT(dev.info().wait(), StatusIs(Code::failed_precondition, "cpu:0 is closed"));
    EXPECT_THAT(dev.health(), StatusIs(Code::failed_precondition));
  }
  EXPECT_EQ(testing::count_open_fds(), fds_before);
}

TEST(DeviceCloseTest, DroppingTheLastCopyOfAnIsolatedDeviceEndsItsWorker) {
  const int fds_before = testing::count_open_fds();
  System system;
  pid_t worker = 0;
  std::optional<Buffer<float>> outlives_device;
  {
    Device dev = *Device::open(system, isolated_cpu());
    worker = dev.info().wait()->worker_pid;
    outlives_device = *dev.allocate<float>(16).wait();
  }
  // Nobody waits for this close: it runs on a thread of the System's.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while ((!testing::process_gone(worker) || testing::count_open_fds() != fds_before) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(2ms);
  }
  EXPECT_TRUE(testing::process_gone(worker));
  EXPECT_TRUE(testing::live_children().empty());
  EXPECT_EQ(testing::count_open_fds(), fds_before);
  outlives_device.reset();
}

}  // namespace
}  // namespace accel

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "accel/device/device.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::StatusIs;

class CpuDeviceTest : public ::testing::Test {
 protected:
  Device open(DeviceOptions options = {}) {
    Result<Device> device = Device::open(system_, options);
    EXPECT_THAT(device, IsOk());
    return *device;
  }
  System system_;
};

// One CPU device, whatever the machine; the CUDA count agrees with what open_default opens.
TEST_F(CpuDeviceTest, CountsOneCpuAndTheGpusOpenDefaultWouldTake) {
  EXPECT_EQ(Device::count(DeviceKind::cpu), 1);
  const DeviceKind expected = Device::count(DeviceKind::cuda) > 0 ? DeviceKind::cuda : DeviceKind::cpu;
  EXPECT_EQ(Device::default_kind(), expected);
  Result<Device> opened = Device::open_default(system_);
  ASSERT_THAT(opened, IsOk());
  EXPECT_EQ(opened->kind(), expected);
}

TEST_F(CpuDeviceTest, UploadThenDownloadRoundTrips) {
  Device dev = open();
  std::vector<float> host(1000);
  std::iota(host.begin(), host.end(), 0.5f);
  Buffer<float> buffer = *dev.allocate<float>(host.size()).wait();
  EXPECT_EQ(buffer.size(), 1000u);
  ASSERT_THAT(dev.upload(std::span<const float>(host), buffer).wait(), IsOk());
  std::vector<float> back(1000, -1.0f);
  ASSERT_THAT(dev.download(buffer, std::span<float>(back)).wait(), IsOk());
  EXPECT_EQ(back, host);
}

TEST_F(CpuDeviceTest, RequestsRunInTheOrderTheyWereSentWithoutWaitingBetween) {
  Device dev = open();
  std::vector<double> a(64, 1.0), b(64, 2.0), out(64, 0.0);
  Buffer<double> x = *dev.allocate<double>(64).wait();
  Buffer<double> y = *dev.allocate<double>(64).wait();
  auto f1 = dev.upload(std::span<const double>(a), x);
  auto f2 = dev.ask(CopyOnDevice{.source = x, .destination = y, .count = 64});
  auto f3 = dev.upload(std::span<const double>(b), x);
  auto f4 = dev.download(y, std::span<double>(out));
  for (auto* f : {&f1, &f2, &f3, &f4}) ASSERT_THAT(f->wait(), IsOk());
  EXPECT_EQ(out, a);
}

TEST_F(CpuDeviceTest, CopiesOutsideTheBufferAreRefused) {
  Device dev = open();
  Buffer<float> buffer = *dev.allocate<float>(10).wait();
  std::vector<float> host(8);
  EXPECT_THAT(dev.upload(std::span<const float>(host), buffer, 3).wait(),
              StatusIs(Code::invalid_argument, "lie outside"));
  EXPECT_THAT(dev.download(buffer, std::span<float>(host), 5).wait(), StatusIs(Code::invalid_argument, "lie outside"));
  EXPECT_THAT(
      dev.ask(CopyToDevice{.source = {.data = host.data(), .count = 4, .dtype = DType::f64}, .destination = buffer})
          .wait(),
      StatusIs(Code::invalid_argument, "holds f64 elements but the buffer holds f32"));
  EXPECT_THAT(
      dev.ask(CopyToHost{
                  .source = buffer, .source_offset = ~0ull, .destination = HostDestination::of(std::span<float>(host))})
          .wait(),
      StatusIs(Code::invalid_argument));
}

TEST_F(CpuDeviceTest, BadAllocationsAreClearErrors) {
  Device dev = open({.memory_limit_bytes = 1 << 20});
  EXPECT_THAT(dev.allocate<float>(0).wait(), StatusIs(Code::invalid_argument, "0 elements"));
  EXPECT_THAT(dev.allocate<double>(1ull << 62).wait(), StatusIs(Code::invalid_argument, "overflow"));
  EXPECT_THAT(dev.allocate<float>(1 << 20).wait(), StatusIs(Code::resource_exhausted, "memory limit of 1048576"));
  EXPECT_THAT(dev.allocate<float>(1024).wait(), IsOk());  // the device keeps serving
}

TEST_F(CpuDeviceTest, AFreedBufferIsStaleForEveryHolder) {
  Device dev = open();
  Buffer<float> buffer = *dev.allocate<float>(16).wait();
  Buffer<float> copy = buffer;
  BufferHandle raw = buffer;
  ASSERT_THAT(dev.free(buffer).wait(), IsOk());
  std::vector<float> host(16);
  EXPECT_THAT(dev.download(copy, std::span<float>(host)).wait(), StatusIs(Code::stale_handle, "has been freed"));
  EXPECT_THAT(dev.ask(Free{.buffer = raw}).wait(), StatusIs(Code::stale_handle));
  // The slot is reused by the next allocation, but the old handle still cannot reach it.
  Buffer<float> reused = *dev.allocate<float>(16).wait();
  EXPECT_EQ(reused.handle().slot, raw.slot);
  EXPECT_THAT(dev.download(copy, std::span<float>(host)).wait(), StatusIs(Code::stale_handle));
  EXPECT_THAT(dev.download(reused, std::span<float>(host)).wait(), IsOk());
}

TEST_F(CpuDeviceTest, DroppingTheLastOwnerFreesTheBuffer) {
  Device dev = open();
  BufferHandle raw;
  {
    Buffer<float> buffer = *dev.allocate<float>(256).wait();
    raw = buffer;
    Buffer<float> copy = buffer;
    EXPECT_EQ(dev.info().wait()->memory.live_buffers, 1u);
  }
  DeviceInfo info = *dev.info().wait();
  EXPECT_EQ(info.memory.live_buffers, 0u);
  EXPECT_EQ(info.memory.in_use_bytes, 0u);
  EXPECT_EQ(info.memory.peak_bytes, 1024u);
  std::vector<float> host(256);
  EXPECT_THAT(dev.ask(CopyToHost{.source = raw, .destination = HostDestination::of(std::span<float>(host))}).wait(),
              StatusIs(Code::stale_handle));
}

TEST_F(CpuDeviceTest, HandlesFromAnotherDeviceOrNullAreRefused) {
  Device one = open();
  Device two = open();
  Buffer<float> buffer = *one.allocate<float>(4).wait();
  std::vector<float> host(4);
  EXPECT_THAT(two.download(buffer, std::span<float>(host)).wait(), StatusIs(Code::invalid_argument, "another device"));
  EXPECT_THAT(one.download(Buffer<float>(), std::span<float>(host)).wait(),
              StatusIs(Code::invalid_argument, "null buffer"));
}

TEST_F(CpuDeviceTest, ResetMakesEveryHandleStale) {
  Device dev = open();
  Buffer<float> buffer = *dev.allocate<float>(4).wait();
  const std::uint32_t epoch = dev.info().wait()->epoch;
  ASSERT_THAT(dev.reset().wait(), IsOk());
  EXPECT_EQ(dev.info().wait()->epoch, epoch + 1);
  std::vector<float> host(4);
  EXPECT_THAT(dev.download(buffer, std::span<float>(host)).wait(),
              StatusIs(Code::stale_handle, "the context has been rebuilt"));
}

// A supervisor restart rebuilds the context from its factory: every buffer of the old one is stale, and requests
// queued behind the failure run on the new context.
TEST_F(CpuDeviceTest, HandlesAreStaleAfterTheSupervisorRestartsTheDevice) {
  Device dev = open({.memory_limit_bytes = 1 << 20,
                     .supervision = SupervisionPolicy()
                                        .on(Code::resource_exhausted, Directive::restart)
                                        .with_budget({.initial_backoff = std::chrono::milliseconds(0)})});
  Buffer<float> before = *dev.allocate<float>(4).wait();
  auto oom = dev.allocate<float>(1 << 20);
  auto behind = dev.allocate<float>(4);
  EXPECT_THAT(oom.wait(), StatusIs(Code::resource_exhausted));
  Result<Buffer<float>> after = behind.wait();
  ASSERT_THAT(after, IsOk());
  EXPECT_EQ(dev.actor().restart_count(), 1);
  std::vector<float> host(4);
  EXPECT_THAT(dev.download(before, std::span<float>(host)).wait(), StatusIs(Code::stale_handle, "rebuilt"));
  EXPECT_THAT(dev.download(*after, std::span<float>(host)).wait(), IsOk());
}

// One ordered thread: every valid fence is already behind, so waiting for one is OK at once. They are checked
// as a CUDA device checks them, so that code written against the CPU device keeps working on a GPU.
TEST_F(CpuDeviceTest, FencesAreSatisfiedAtOnceButCheckedLikeHandles) {
  Device dev = open();
  const Fence first = *dev.record_fence().wait();
  const Fence second = *dev.record_fence().wait();
  EXPECT_EQ(first.device, dev.id());
  EXPECT_GT(second.sequence, first.sequence);
  EXPECT_THAT(dev.wait_fence(first).wait(), IsOk());
  EXPECT_THAT(dev.wait_fence(second).wait(), IsOk());

  EXPECT_THAT(dev.wait_fence(Fence{}).wait(), StatusIs(Code::invalid_argument, "null"));
  Fence never_recorded = second;
  never_recorded.sequence += 1;
  EXPECT_THAT(dev.wait_fence(never_recorded).wait(), StatusIs(Code::invalid_argument, "never recorded"));
  System other_system;
  Device other = *Device::open(other_system, {});
  EXPECT_THAT(dev.wait_fence(*other.record_fence().wait()).wait(), StatusIs(Code::invalid_argument, "another device"));
  ASSERT_THAT(dev.reset().wait(), IsOk());
  EXPECT_THAT(dev.wait_fence(first).wait(), StatusIs(Code::stale_handle, "rebuilt"));
  EXPECT_THAT(dev.wait_fence(*dev.record_fence().wait()).wait(), IsOk());
}

// Device::count(cuda) and Device::open agree on how many CUDA devices there are: open refuses the ordinal just past
// the count with the error that says why (no CUDA tier in this build, no usable GPU, or how many GPUs there are).
// That ordinal, not cuda:0, so that this test creates no CUDA context where there are GPUs.
TEST_F(CpuDeviceTest, ThereIsOneCpuDeviceAndAsManyCudaDevicesAsCountSays) {
  EXPECT_THAT(Device::open(system_, {.kind = DeviceKind::cpu, .ordinal = 1}),
              StatusIs(Code::invalid_argument, "cpu:1"));
  const int gpus = Device::count(DeviceKind::cuda);
  const Result<Device> past = Device::open(system_, {.kind = DeviceKind::cuda, .ordinal = gpus});
#if ACCEL_HAVE_CUDA
  if (gpus == 0) {
    EXPECT_THAT(past, StatusIs(Code::unavailable, "cuda:0: no usable CUDA GPU"));
  } else {
    const std::string n = std::to_string(gpus);
    EXPECT_THAT(past, StatusIs(Code::invalid_argument, "cuda:" + n + " does not exist: this machine has " + n));
  }
#else
  EXPECT_EQ(gpus, 0);
  EXPECT_THAT(past, StatusIs(Code::not_supported, "cuda:0: this build of accel has no CUDA device tier"));
#endif
}

TEST_F(CpuDeviceTest, ManyClientThreadsShareOneDevice) {
  Device dev = open();
  constexpr int kClients = 8, kRounds = 50;
  std::vector<std::thread> clients;
  std::atomic<int> good{0};
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r) {
        std::vector<std::int32_t> in(33, c * 1000 + r), out(33, -1);
        Result<Buffer<std::int32_t>> buffer = dev.allocate<std::int32_t>(33).wait();
        if (!buffer) continue;
        auto up = dev.upload(std::span<const std::int32_t>(in), *buffer);
        auto down = dev.download(*buffer, std::span<std::int32_t>(out));
        if (up.wait().ok() && down.wait().ok() && out == in) ++good;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(good.load(), kClients * kRounds);
  EXPECT_EQ(dev.info().wait()->memory.live_buffers, 0u);
}

}  // namespace
}  // namespace accel

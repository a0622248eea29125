// Copies between two in-process CUDA devices (accel/device/peer.hpp): cuda:0 and cuda:1 where the machine has two
// GPUs, else cuda:0 opened twice (two devices, two contexts' buffer tables and pools on one GPU). Skipped without a
// GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "accel/device/peer.hpp"
#include "testing/buffer_values.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/device_pair.hpp"

namespace accel {
namespace {

using testing::contents;
using testing::filled;
using testing::IsOk;
using testing::StatusIs;

class CudaPeerCopyTest : public ::testing::Test, protected testing::DevicePair {
 protected:
  void SetUp() override {
    const int gpus = Device::count(DeviceKind::cuda);
    if (gpus == 0) GTEST_SKIP() << "no CUDA GPU here";
    open_pair({.kind = DeviceKind::cuda, .ordinal = 0}, {.kind = DeviceKind::cuda, .ordinal = gpus > 1 ? 1 : 0});
  }
};

TEST_F(CudaPeerCopyTest, CopiesRangesOfSeveralSizesAndTypesBothWays) {
  for (std::size_t n : {1ul, 1000ul, (3ul << 20) + 7}) {
    expect_range_copied(a(), b(), n, 16);
    expect_range_copied(b(), a(), n, 0);

    const std::vector<std::int8_t> bytes = random_values<std::int8_t>(n);
    Buffer<std::int8_t> bytes_on_b = filled(b(), bytes);
    Buffer<std::int8_t> bytes_on_a = *a().allocate<std::int8_t>(n).wait();
    ASSERT_THAT(copy_between_devices(b(), a(), {.source = bytes_on_b, .destination = bytes_on_a, .count = n}).wait(),
                IsOk());
    EXPECT_EQ(contents(a(), bytes_on_a), bytes);
  }
}

// The copy takes its place in both devices' orders: it reads the upload sent just before it, the destination's
// requests sent after it follow it, and an overwrite of the source sent after it waits for it on the GPU. Nothing here
// waits for GPU work on the host between the requests.
TEST_F(CudaPeerCopyTest, OrdersTheCopyOnBothDevicesWithoutWaitingOnTheHost) {
  const std::size_t n = 64ul << 20;  // 256 MiB: the copy is still running when the next requests are enqueued
  const std::vector<float> first = random_values<float>(n);
  const std::vector<float> second = random_values<float>(n);
  const std::vector<float> stale = random_values<float>(n);
  Buffer<float> on_a = *a().allocate<float>(n).wait();
  Buffer<float> on_b = *b().allocate<float>(n).wait();
  Future<Done> uploaded = a().upload(std::span<const float>(first), on_a);  // read by the copy
  Future<Done> earlier = b().upload(std::span<const float>(stale), on_b);   // written before the copy, in b's order
  Future<Done> copied = copy_between_devices(a(), b(), {.source = on_a, .destination = on_b, .count = n});
  std::vector<float> seen(n);
  Future<Done> read = b().download(on_b, std::span<float>(seen));  // after the copy, in b's order
  Future<Done> overwritten = a().upload(std::span<const float>(second), on_a);
  ASSERT_THAT(uploaded.wait(), IsOk());
  ASSERT_THAT(earlier.wait(), IsOk());
  ASSERT_THAT(copied.wait(), IsOk());
  ASSERT_THAT(read.wait(), IsOk());
  ASSERT_THAT(overwritten.wait(), IsOk());
  EXPECT_TRUE(seen == first) << "the destination read something other than the source before its overwrite";
  EXPECT_TRUE(contents(a(), on_a) == second);
}

TEST_F(CudaPeerCopyTest, RefusesStaleAndForeignBuffersNamingThem) {
  Buffer<float> on_a = filled(a(), random_values<float>(32));
  const std::vector<float> target = random_values<float>(32);
  Buffer<float> on_b = filled(b(), target);
  EXPECT_THAT(
      copy_between_devices(a(), b(), {.source = on_a, .source_offset = 1, .destination = on_b, .count = 32}).wait(),
      StatusIs(Code::invalid_argument));
  Buffer<std::int32_t> integers = *b().allocate<std::int32_t>(32).wait();
  EXPECT_THAT(copy_between_devices(a(), b(), {.source = on_a, .destination = integers, .count = 32}).wait(),
              StatusIs(Code::invalid_argument, "element types differ"));
  const BufferHandle freed = on_a;
  ASSERT_THAT(a().free(freed).wait(), IsOk());
  EXPECT_THAT(copy_between_devices(a(), b(), {.source = freed, .destination = on_b, .count = 32}).wait(),
              StatusIs(Code::stale_handle));
  // A closed source device is no longer found: its buffers are nobody's.
  Buffer<float> last = filled(a(), random_values<float>(32));
  const BufferHandle orphan = last;
  ASSERT_THAT(a().close().wait(), IsOk());
  EXPECT_THAT(b().ask(CopyOnDevice{.source = orphan, .destination = on_b, .count = 32}).wait(),
              StatusIs(Code::invalid_argument, "not a CUDA device open in this process"));
  EXPECT_EQ(contents(b(), on_b), target);
}

TEST_F(CudaPeerCopyTest, StagesCopiesWithAnIsolatedDeviceThroughTheHost) {
  Result<Device> isolated =
      Device::open(system_, {.kind = DeviceKind::cuda, .ordinal = 0, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  const std::vector<float> source = random_values<float>(100000);
  Buffer<float> on_a = filled(a(), source);
  Buffer<float> remote = *isolated->allocate<float>(source.size()).wait();
  ASSERT_THAT(
      copy_between_devices(a(), *isolated, {.source = on_a, .destination = remote, .count = source.size()}).wait(),
      IsOk());
  Buffer<float> back = *b().allocate<float>(source.size()).wait();
  ASSERT_THAT(
      copy_between_devices(*isolated, b(), {.source = remote, .destination = back, .count = source.size()}).wait(),
      IsOk());
  EXPECT_EQ(contents(b(), back), source);
}

// Device::open runs on the caller's thread, whose current CUDA device may be another library's (PyTorch keeps its own
// there): opening cuda:1 leaves it on cuda:0, and so does closing it.
TEST(CudaDeviceOpenOnGpus, LeavesTheCallersCurrentDeviceAsItWas) {
  if (Device::count(DeviceKind::cuda) < 2) GTEST_SKIP() << "needs two GPUs";
  std::thread([] {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // cuda:0's context is this thread's current one
    System system;
    Result<Device> opened = Device::open(system, {.kind = DeviceKind::cuda, .ordinal = 1});
    ASSERT_THAT(opened, IsOk());
    int current = -1;
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, 0) << "Device::open moved the caller's current device";
    ASSERT_THAT(opened->close().wait(), IsOk());
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, 0) << "closing the device moved the caller's current device";
  }).join();
}

TEST(CudaPeerLinksOnGpus, DescribeEveryPair) {
  const int gpus = Device::count(DeviceKind::cuda);
  if (gpus < 2) GTEST_SKIP() << "needs two GPUs";
  for (const PeerLink& link : cuda_peer_links()) {
    int can = 0;
    ASSERT_EQ(cudaDeviceCanAccessPeer(&can, link.from, link.to), cudaSuccess);
    EXPECT_EQ(link.peer_access, can != 0);
    RecordProperty("link", std::to_string(link.from) + "->" + std::to_string(link.to) + " peer=" +
                               std::to_string(link.peer_access) + " atomics=" + std::to_string(link.native_atomics) +
                               " rank=" + std::to_string(link.performance_rank));
  }
}

}  // namespace
}  // namespace accel

// Copies between two devices of one process (accel/device/peer.hpp) where CI can run them: two CPU devices, and a
// CPU device with an isolated one (staged through host memory). Between GPUs: cuda_peer_copy_test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "accel/device/peer.hpp"
#include "testing/buffer_values.hpp"
#include "testing/device_pair.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using testing::contents;
using testing::filled;
using testing::IsOk;
using testing::StatusIs;

class PeerCopyTest : public ::testing::TestWithParam<Isolation>, protected testing::DevicePair {
 protected:
  void SetUp() override { open_pair({.kind = DeviceKind::cpu}, {.kind = DeviceKind::cpu, .isolation = GetParam()}); }
};

TEST_P(PeerCopyTest, CopiesRangesBothWays) {
  for (std::size_t n : {1ul, 1000ul, (1ul << 20) + 3}) {
    expect_range_copied(a(), b(), n, 10);
    expect_range_copied(b(), a(), n, 0);
  }
}

// The copy takes its place in both devices' orders: an upload sent just before it is what it reads, a download from
// the destination sent just after it reads the copy, and an overwrite of the source sent after it does not reach it.
// Nothing is waited for in between.
TEST_P(PeerCopyTest, TakesItsPlaceInBothDevicesOrders) {
  const std::size_t n = (1ul << 20) + 5;
  const std::vector<float> first = random_values<float>(n);
  const std::vector<float> second = random_values<float>(n);
  Buffer<float> on_a = *a().allocate<float>(n).wait();
  Buffer<float> on_b = *b().allocate<float>(n).wait();
  Future<Done> uploaded = a().upload(std::span<const float>(first), on_a);
  Future<Done> copied = copy_between_devices(a(), b(), {.source = on_a, .destination = on_b, .count = n});
  std::vector<float> seen(n);
  Future<Done> read = b().download(on_b, std::span<float>(seen));
  Future<Done> overwritten = a().upload(std::span<const float>(second), on_a);
  for (Future<Done>* done : {&uploaded, &copied, &read, &overwritten}) ASSERT_THAT(done->wait(), IsOk());
  EXPECT_TRUE(seen == first);
  EXPECT_TRUE(contents(a(), on_a) == second);
}

TEST_P(PeerCopyTest, RefusesBeforeCopyingAnything) {
  const std::vector<float> source = random_values<float>(64);
  const std::vector<float> target = random_values<float>(64);
  Buffer<float> on_a = filled(a(), source);
  Buffer<float> on_b = filled(b(), target);
  // The devices named the wrong way round: each buffer belongs to the other.
  EXPECT_THAT(copy_between_devices(b(), a(), {.source = on_a, .destination = on_b, .count = 64}).wait(),
              StatusIs(Code::invalid_argument, "is not a buffer of"));
  // Past the destination's end: the source half would have run first, so the range is checked up front.
  EXPECT_THAT(
      copy_between_devices(a(), b(), {.source = on_a, .destination = on_b, .destination_offset = 1, .count = 64})
          .wait(),
      StatusIs(Code::invalid_argument, "past the end of the destination"));
  EXPECT_THAT(
      copy_between_devices(a(), b(), {.source = on_a, .source_offset = 65, .destination = on_b, .count = 0}).wait(),
      StatusIs(Code::invalid_argument, "past the end of the source"));
  Buffer<std::int32_t> integers = *b().allocate<std::int32_t>(64).wait();
  EXPECT_THAT(copy_between_devices(a(), b(), {.source = on_a, .destination = integers, .count = 64}).wait(),
              StatusIs(Code::invalid_argument, "element types differ"));
  EXPECT_EQ(contents(b(), on_b), target);

  // A freed source is stale on the device that owned it, and nothing reaches the destination.
  const BufferHandle freed = on_a;
  ASSERT_THAT(a().free(freed).wait(), IsOk());
  EXPECT_THAT(copy_between_devices(a(), b(), {.source = freed, .destination = on_b, .count = 64}).wait(),
              StatusIs(Code::stale_handle));
  EXPECT_EQ(contents(b(), on_b), target);
}

TEST_P(PeerCopyTest, ADeviceAskedDirectlyNamesTheWayToCopyBetweenDevices) {
  Buffer<float> on_a = filled(a(), random_values<float>(8));
  Buffer<float> on_b = filled(b(), random_values<float>(8));
  EXPECT_THAT(b().ask(CopyOnDevice{.source = on_a, .destination = on_b, .count = 8}).wait(),
              StatusIs(Code::invalid_argument, "copy_between_devices"));
}

TEST_P(PeerCopyTest, OneDeviceOnBothSidesIsAnOrdinaryCopy) {
  const std::vector<float> source = random_values<float>(100);
  Buffer<float> from = filled(a(), source);
  Buffer<float> to = *a().allocate<float>(100).wait();
  ASSERT_THAT(copy_between_devices(a(), a(), {.source = from, .destination = to, .count = 100}).wait(), IsOk());
  EXPECT_EQ(contents(a(), to), source);
}

INSTANTIATE_TEST_SUITE_P(Kinds, PeerCopyTest, ::testing::Values(Isolation::in_process, Isolation::worker_process),
                         [](const ::testing::TestParamInfo<Isolation>& info) {
                           return std::string(to_string(info.param));
                         });

TEST(CudaPeerLinks, ListEveryOrderedPairOfDistinctGpus) {
  const int gpus = Device::count(DeviceKind::cuda);
  const std::vector<PeerLink> links = cuda_peer_links();
  ASSERT_EQ(links.size(), gpus < 2 ? 0u : static_cast<std::size_t>(gpus * (gpus - 1)));
  for (const PeerLink& link : links) {
    EXPECT_NE(link.from, link.to);
    EXPECT_LT(link.from, gpus);
    EXPECT_LT(link.to, gpus);
    EXPECT_EQ(link.nvlinks > 0, link.link == LinkKind::nvlink);
  }
}

TEST(CudaPeerLinks, NameEachKindOfLink) {
  EXPECT_EQ(PeerLink{}.link, LinkKind::unknown);
  std::vector<std::string_view> names;
  for (LinkKind kind : {LinkKind::unknown, LinkKind::nvlink, LinkKind::same_board, LinkKind::pcie_switch,
                        LinkKind::pcie_host_bridge, LinkKind::numa_node, LinkKind::system})
    names.push_back(to_string(kind));
  EXPECT_THAT(names, ::testing::ElementsAre("unknown", "nvlink", "same_board", "pcie_switch", "pcie_host_bridge",
                                            "numa_node", "system"));
}

}  // namespace
}  // namespace accel

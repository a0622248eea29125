// DeviceInfo through the isolated device's wire encoding: its lists of libraries and caches come back whole, and
// lists too long for a reply slot are cut to what fits rather than making the reply unreadable.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "accel/core/supervision.hpp"
#include "device/isolated/channel.hpp"
#include "device/isolated/wire.hpp"
#include "testing/status_matchers.hpp"

namespace accel::device::isolated {
namespace {

using testing::IsOk;

CacheStats numbered_cache(int i, std::string directory) {
  CacheStats stats{.name = "cache-" + std::to_string(i), .directory = std::move(directory)};
  stats.hits = 1000 + i;
  stats.misses = 2000 + i;
  stats.builds = 3000 + i;
  stats.disk_rejects = 4000 + i;
  stats.not_ready = 5000 + i;
  return stats;
}

Result<DeviceInfo> round_trip(const DeviceInfo& info) {
  std::vector<std::byte> slot(kReplySlotBytes);
  const std::size_t used = encode_reply(slot, Result<DeviceInfo>(info));
  EXPECT_LE(used, kReplySlotBytes);
  return decode_reply<DeviceInfo>(std::span<const std::byte>(slot.data(), used));
}

TEST(DeviceInfoWireTest, LibrariesAndCachesComeBackWhole) {
  DeviceInfo info{.kind = DeviceKind::cuda, .ordinal = 1, .name = "gpu", .worker_pid = 42};
  info.libraries = {{.name = "cuBLASLt", .version = "13.0.1"}, {.name = "cuDNN", .version = "9.14.0"}};
  info.caches = {numbered_cache(1, "/home/someone/.cache/accel/cudnn-plans"), numbered_cache(2, "")};
  Result<DeviceInfo> decoded = round_trip(info);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->name, "gpu");
  EXPECT_EQ(decoded->worker_pid, 42);
  ASSERT_EQ(decoded->libraries.size(), 2u);
  ASSERT_NE(decoded->library("cuDNN"), nullptr);
  EXPECT_EQ(decoded->library("cuDNN")->version, "9.14.0");
  ASSERT_EQ(decoded->caches.size(), 2u);
  const CacheStats* first = decoded->cache("cache-1");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->directory, "/home/someone/.cache/accel/cudnn-plans");
  EXPECT_EQ(first->hits, 1001u);
  EXPECT_EQ(first->misses, 2001u);
  EXPECT_EQ(first->builds, 3001u);
  EXPECT_EQ(first->disk_rejects, 4001u);
  EXPECT_EQ(first->not_ready, 5001u);
  EXPECT_EQ(decoded->cache("cache-3"), nullptr);
}

TEST(DeviceInfoWireTest, CachesBeyondTheReplySlotAreLeftOutAndTheRestDecodes) {
  DeviceInfo info{.name = "gpu"};
  info.libraries = {{.name = "OpenBLAS", .version = "0.3.21"}};
  for (int i = 0; i < 64; ++i) info.caches.push_back(numbered_cache(i, std::string(100, 'd')));
  Result<DeviceInfo> decoded = round_trip(info);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_GT(decoded->caches.size(), 5u);
  EXPECT_LT(decoded->caches.size(), 64u);
  for (std::size_t i = 0; i < decoded->caches.size(); ++i) {
    EXPECT_EQ(decoded->caches[i].name, info.caches[i].name);
    EXPECT_EQ(decoded->caches[i].builds, info.caches[i].builds);
  }
  EXPECT_EQ(decoded->libraries.size(), 1u);
}

// Found by fuzz/wire_reply_fuzzer: a status code past the enum from a worker indexed past the client's
// supervision table. It is a damaged reply now, an error for that request only.
TEST(DeviceInfoWireTest, AReplyWithAnUnknownStatusCodeIsDamaged) {
  std::vector<std::byte> slot(kReplySlotBytes);
  const std::size_t used =
      encode_reply(slot, Result<Done>(Status(Code::invalid_argument, "refused", Source::runtime, 0)));
  slot[0] = std::byte{200};  // the code is the reply's first byte
  Result<Done> decoded = decode_reply<Done>(std::span(slot).first(used));
  EXPECT_THAT(decoded, testing::StatusIs(Code::internal, "status code 200"));
  EXPECT_EQ(SupervisionPolicy().decide(decoded.status().code()), Directive::restart);
}

}  // namespace
}  // namespace accel::device::isolated

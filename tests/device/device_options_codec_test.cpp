// The options an isolated worker is told cross through the byte codec: every field the worker uses comes back
// equal, and damaged bytes are refused, never trusted.
#include "device/device_options_codec.hpp"

#include <gtest/gtest.h>

#include "testing/status_matchers.hpp"

namespace accel::device {
namespace {

using testing::IsOk;
using testing::StatusIs;

WorkerSetup rich_setup() {
  DeviceOptions options{
      .kind = DeviceKind::cuda,
      .ordinal = 3,
      .worker = {.spin = std::chrono::microseconds(77), .heartbeat_timeout = std::chrono::milliseconds(1234)},
      .memory_limit_bytes = 1ull << 33,
      .completion = CompletionStrategy::host_callback,
      .pinned_staging_cache_bytes = 12345,
      .blas = {.plan_cache_capacity = 7, .workspace_bytes = 8},
      .dnn = {.plan_cache_capacity = 9,
              .persistent_plans = false,
              .plan_directory = "/tmp/plans é",
              .plan_directory_bytes = 10},
      .jit = {.persistent_kernels = true,
              .kernel_directory = std::string(3000, 'k'),
              .kernel_directory_bytes = 11,
              .compile_threads = 12}};
  return {.device_id = 42, .name = "cuda:3", .options = options};
}

std::vector<std::byte> encoded(const WorkerSetup& setup) {
  ByteWriter out;
  encode(out, setup);
  return out.take();
}

TEST(DeviceOptionsCodec, EveryOptionTheWorkerUsesComesBackEqual) {
  const WorkerSetup sent = rich_setup();
  const std::vector<std::byte> bytes = encoded(sent);
  ByteReader in(bytes);
  const Result<WorkerSetup> got = decode_worker_setup(in);
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->device_id, 42u);
  EXPECT_EQ(got->name, "cuda:3");
  const DeviceOptions& o = got->options;
  EXPECT_EQ(o.kind, DeviceKind::cuda);
  EXPECT_EQ(o.ordinal, 3);
  EXPECT_EQ(o.isolation, Isolation::in_process);
  EXPECT_EQ(o.worker.spin, std::chrono::microseconds(77));
  EXPECT_EQ(o.worker.heartbeat_timeout, std::chrono::milliseconds(1234));
  EXPECT_EQ(o.memory_limit_bytes, 1ull << 33);
  EXPECT_EQ(o.completion, CompletionStrategy::host_callback);
  EXPECT_EQ(o.pinned_staging_cache_bytes, 12345u);
  EXPECT_EQ(o.blas.plan_cache_capacity, 7u);
  EXPECT_EQ(o.blas.workspace_bytes, 8u);
  EXPECT_EQ(o.dnn.plan_cache_capacity, 9u);
  EXPECT_FALSE(o.dnn.persistent_plans);
  EXPECT_EQ(o.dnn.plan_directory, "/tmp/plans é");
  EXPECT_EQ(o.dnn.plan_directory_bytes, 10u);
  EXPECT_TRUE(o.jit.persistent_kernels);
  EXPECT_EQ(o.jit.kernel_directory, std::string(3000, 'k'));
  EXPECT_EQ(o.jit.kernel_directory_bytes, 11u);
  EXPECT_EQ(o.jit.compile_threads, 12u);
}

TEST(DeviceOptionsCodec, EveryPrefixAndALongerEncodingAreRefused) {
  std::vector<std::byte> bytes = encoded(rich_setup());
  for (std::size_t length = 0; length < bytes.size(); length += 7) {
    ByteReader in(std::span<const std::byte>(bytes.data(), length));
    EXPECT_THAT(decode_worker_setup(in), StatusIs(Code::invalid_argument)) << "a prefix of " << length << " bytes";
  }
  bytes.push_back(std::byte{0});
  ByteReader longer(bytes);
  EXPECT_THAT(decode_worker_setup(longer), StatusIs(Code::invalid_argument, "cut short or too long"));
}

TEST(DeviceOptionsCodec, AnEnumOutOfRangeIsRefused) {
  std::vector<std::byte> bytes = encoded(rich_setup());
  const std::size_t kind_at = sizeof(std::uint32_t) + sizeof(std::uint32_t) + std::string("cuda:3").size();
  bytes[kind_at] = std::byte{9};
  ByteReader in(bytes);
  EXPECT_THAT(decode_worker_setup(in), StatusIs(Code::invalid_argument, "out of range"));
}

}  // namespace
}  // namespace accel::device

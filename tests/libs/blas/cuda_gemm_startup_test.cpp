// cuBLASLt's one-time load and first call (100-130 ms once per process) start when a CUDA device opens, on a thread
// of their own, so that the first GEMM does not pay for them on its caller's path (issue 42); a GEMM that arrives
// while they run waits for them and is correct. Each test needs a process in which nothing has loaded cuBLASLt yet:
// ctest runs every test in a process of its own, and the first test of the binary checks it. Skipped without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "accel/libs/blas/gemm.hpp"
#include "testing/cuda_fixture.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;
using testing::IsOk;

// A wait that ends as soon as the code works and only keeps a broken run from hanging: far beyond cuBLASLt's load on
// any machine, so reaching it means the load never started.
constexpr auto kHangGuard = 60s;
constexpr const char* kNotLoaded = "not loaded yet";

bool cublaslt_mapped_here() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libcublasLt") != std::string::npos) return true;
  return false;
}

std::string cublaslt_version(const Device& device) {
  Result<DeviceInfo> info = device.info().wait();
  EXPECT_THAT(info, IsOk());
  if (!info.ok()) return "no answer";
  for (const LibraryVersion& library : info->libraries)
    if (library.name == "cuBLASLt") return library.version;
  return "absent";
}

// Asks the device (QueryDevice, which never loads a library) until it reports cuBLASLt loaded; no GEMM is sent.
std::string wait_for_cublaslt(const Device& device) {
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
  std::string version = cublaslt_version(device);
  while (version == kNotLoaded && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
    version = cublaslt_version(device);
  }
  return version;
}

std::vector<float> inputs(std::size_t count, int seed) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>((i * 37 + seed * 11) % 101) / 101.0f - 0.5f;
  return values;
}

// Past the sizes the small kernel takes (blas::small_gemm), so that the product is cuBLASLt's.
constexpr std::int64_t kSize = 160;
constexpr std::size_t kElements = kSize * kSize;

// C = A·B, kSize³ f32, on `device`: its result.
std::vector<float> multiply(const Device& device, const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(kSize * kSize, 0.0f);
  Result<Buffer<float>> da = device.allocate<float>(a.size()).wait();
  Result<Buffer<float>> db = device.allocate<float>(b.size()).wait();
  Result<Buffer<float>> dc = device.allocate<float>(c.size()).wait();
  EXPECT_THAT(da, IsOk());
  EXPECT_THAT(db, IsOk());
  EXPECT_THAT(dc, IsOk());
  if (!da.ok() || !db.ok() || !dc.ok()) return {};
  EXPECT_THAT(device.upload(std::span<const float>(a), *da).wait(), IsOk());
  EXPECT_THAT(device.upload(std::span<const float>(b), *db).wait(), IsOk());
  EXPECT_THAT(device.gemm(Gemm{.shape = {.m = kSize, .n = kSize, .k = kSize}, .a = *da, .b = *db, .c = *dc}).wait(),
              IsOk());
  EXPECT_THAT(device.download(*dc, std::span<float>(c)).wait(), IsOk());
  return c;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], expected[i], 1e-4f * (1.0f + std::fabs(expected[i]))) << "element " << i;
}

TEST(CudaGemmStartupTest, CublasLtLoadsWhenTheDeviceOpensWithoutAnyGemm) {
  ASSERT_FALSE(cublaslt_mapped_here()) << "cuBLASLt was loaded before this test: run it in a process of its own "
                                          "(ctest does), so that only the device's open can load it";
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, {.kind = DeviceKind::cuda}, device);
  const std::string version = wait_for_cublaslt(device);
  EXPECT_NE(version, kNotLoaded) << "nothing loaded cuBLASLt within " << kHangGuard.count()
                                 << " s of the open: the device did not start it";
  EXPECT_NE(version, "absent");
  EXPECT_TRUE(cublaslt_mapped_here());
}

TEST(CudaGemmStartupTest, AnIsolatedWorkerLoadsCublasLtWhenItsDeviceOpens) {
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, (DeviceOptions{.kind = DeviceKind::cuda, .isolation = Isolation::worker_process}),
                          device);
  const std::string version = wait_for_cublaslt(device);
  EXPECT_NE(version, kNotLoaded) << "the worker did not start cuBLASLt when its device opened";
  EXPECT_NE(version, "absent");
}

// GEMMs sent on several streams at once, right after the open, meet the load while it runs: each waits for it (no
// second first call at the same time) and is answered with the CPU device's product.
TEST(CudaGemmStartupTest, GemmsSentRightAfterTheOpenWaitForTheLoadAndMatchTheCpu) {
  System system;
  Result<Device> cpu = Device::open(system, {});
  ASSERT_THAT(cpu, IsOk());
  ACCEL_OPEN_CUDA_OR_SKIP(system, {.kind = DeviceKind::cuda}, device);
  std::vector<Device> streams{device};
  for (int i = 0; i < 3; ++i) {
    Result<Device> stream = device.open_stream();
    ASSERT_THAT(stream, IsOk());
    streams.push_back(*stream);
  }
  std::vector<std::vector<float>> results(streams.size());
  {
    std::vector<std::jthread> callers;
    for (std::size_t i = 0; i < streams.size(); ++i)
      callers.emplace_back(
          [&, i] { results[i] = multiply(streams[i], inputs(kElements, static_cast<int>(i)), inputs(kElements, 7)); });
  }
  for (std::size_t i = 0; i < streams.size(); ++i) {
    SCOPED_TRACE("stream " + std::to_string(i));
    expect_close(results[i], multiply(*cpu, inputs(kElements, static_cast<int>(i)), inputs(kElements, 7)));
  }
}

// A device closed while the load runs waits for it (the thread is the context's to join), and the process goes on:
// another device of the same GPU opens and multiplies.
TEST(CudaGemmStartupTest, ADeviceClosedWhileTheLoadRunsClosesAndTheNextOneMultiplies) {
  System system;
  {
    ACCEL_OPEN_CUDA_OR_SKIP(system, {.kind = DeviceKind::cuda}, first);
    ASSERT_THAT(first.close().wait(), IsOk());
  }
  Result<Device> cpu = Device::open(system, {});
  ASSERT_THAT(cpu, IsOk());
  Result<Device> second = Device::open(system, {.kind = DeviceKind::cuda});
  ASSERT_THAT(second, IsOk());
  expect_close(multiply(*second, inputs(kElements, 1), inputs(kElements, 2)),
               multiply(*cpu, inputs(kElements, 1), inputs(kElements, 2)));
  EXPECT_NE(cublaslt_version(*second), kNotLoaded);
}

}  // namespace
}  // namespace accel

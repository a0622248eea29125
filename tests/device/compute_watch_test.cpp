// A CPU worker's heartbeat while one library call computes (device/isolated/compute_watch.hpp): the watch stamps
// while the process uses processor time and not while it waits, and a worker inside one GEMM that lasts several
// heartbeat timeouts answers it and is not replaced.
#include "device/isolated/compute_watch.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

#include "accel/device/device.hpp"
#include "device/isolated/channel.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;
using device::isolated::ComputeWatch;
using testing::IsOk;

TEST(ComputeWatchTest, StampsWhileTheProcessComputesAndNotWhileItWaits) {
  std::atomic<std::int64_t> heartbeat{0};
  ComputeWatch watch(heartbeat, 5ms);
  std::this_thread::sleep_for(100ms);  // twenty looks at a process that only waits
  EXPECT_EQ(heartbeat.load(), 0) << "stamped while the process waited";

  const std::int64_t before = device::isolated::monotonic_ns();
  std::atomic<bool> stop{false};
  std::thread spinner([&stop] {
    volatile std::uint64_t sum = 0;
    while (!stop.load(std::memory_order_relaxed)) sum = sum + 1;
  });
  const auto deadline = std::chrono::steady_clock::now() + 10s;  // a guard for a starved machine, not a measure
  while (heartbeat.load() < before && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  stop = true;
  spinner.join();
  EXPECT_GE(heartbeat.load(), before) << "no stamp while a thread computed";
}

TEST(ComputeWatchTest, CountsEveryThreadOfTheProcess) {
  const std::int64_t before = ComputeWatch::process_cpu_ns();
  std::thread spinner([] {
    const auto until = std::chrono::steady_clock::now() + 50ms;
    volatile std::uint64_t sum = 0;
    while (std::chrono::steady_clock::now() < until) sum = sum + 1;
  });
  spinner.join();
  EXPECT_GE(ComputeWatch::process_cpu_ns() - before, 10'000'000) << "50 ms of spinning counted under 10 ms";
}

Result<double> seconds_of_gemm(const Device& device, std::int64_t n, std::vector<double>* product) {
  std::vector<double> values(static_cast<std::size_t>(n * n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>((i * 7919) % 1000) / 1000.0 - 0.5;
  ACCEL_ASSIGN_OR_RETURN(Buffer<double> a, device.allocate<double>(n * n).wait());
  ACCEL_RETURN_IF_ERROR(device.upload(std::span<const double>(values), a).wait().status());
  ACCEL_ASSIGN_OR_RETURN(Buffer<double> c, device.allocate<double>(n * n).wait());
  const GemmShape shape{.m = n, .n = n, .k = n, .input_type = DType::f64, .output_type = DType::f64};
  const auto start = std::chrono::steady_clock::now();
  ACCEL_RETURN_IF_ERROR(device.gemm({.shape = shape, .a = a, .b = a, .c = c, .alpha = 1.0 / n}).wait().status());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (product != nullptr) {
    product->resize(values.size());
    ACCEL_RETURN_IF_ERROR(device.download(c, std::span<double>(*product)).wait().status());
  }
  return seconds;
}

// One GEMM, one library call with no point inside it to stamp from, that lasts about five heartbeat timeouts in an
// isolated CPU worker. Its order is chosen from a timed run in process so that it does on any machine; the timeout
// is a fifth of that run, at least 50 ms. Before the watch, the supervisor killed the worker as hung and the request
// failed with context_lost.
TEST(ComputeWatchTest, AWorkerInOneLongGemmIsNotTakenForHung) {
  System system;
  Device local = *Device::open(system, {.kind = DeviceKind::cpu});
  constexpr std::int64_t kProbe = 1024;
  ASSERT_THAT(seconds_of_gemm(local, kProbe, nullptr), IsOk());  // OpenBLAS's threads started
  double probe = 1e9;  // the least of three: a busy machine slows a run, it never speeds one
  for (int run = 0; run < 3; ++run) {
    const Result<double> seconds = seconds_of_gemm(local, kProbe, nullptr);
    ASSERT_THAT(seconds, IsOk());
    probe = std::min(probe, *seconds);
  }
  const double scale = std::cbrt(0.8 / std::max(probe, 1e-6));
  const std::int64_t n = std::clamp<std::int64_t>(static_cast<std::int64_t>(kProbe * scale) / 64 * 64, kProbe, 4096);
  const double expected_seconds = probe * std::pow(static_cast<double>(n) / kProbe, 3);
  const auto timeout = std::max(50ms, std::chrono::milliseconds(static_cast<std::int64_t>(expected_seconds * 200)));
  RecordProperty("order", static_cast<int>(n));
  RecordProperty("heartbeat_timeout_ms", static_cast<int>(timeout.count()));

  Device isolated = *Device::open(
      system,
      {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process, .worker = {.heartbeat_timeout = timeout}});
  const pid_t worker = isolated.info().wait()->worker_pid;
  std::vector<double> in_worker;
  const Result<double> seconds = seconds_of_gemm(isolated, n, &in_worker);
  ASSERT_THAT(seconds, IsOk());
  RecordProperty("gemm_ms", static_cast<int>(*seconds * 1000));
  ASSERT_GT(*seconds * 1000, 2.0 * static_cast<double>(timeout.count()))
      << "this machine ran a GEMM of order " << n << " faster than the test can show anything";
  const DeviceInfo after = *isolated.info().wait();
  EXPECT_EQ(after.worker_pid, worker);
  EXPECT_EQ(after.worker_restarts, 0u);
  std::vector<double> in_process;
  ASSERT_THAT(seconds_of_gemm(local, n, &in_process), IsOk());
  double worst = 0;
  for (std::size_t i = 0; i < in_process.size(); ++i) worst = std::max(worst, std::abs(in_worker[i] - in_process[i]));
  EXPECT_LT(worst, 1e-9);
}

}  // namespace
}  // namespace accel

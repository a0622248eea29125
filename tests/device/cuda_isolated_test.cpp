// Isolated CUDA devices: the context lives in a worker process, so a real sticky fault (a kernel writing to an
// invalid address) costs one worker, not the client. Skipped without a GPU.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "testing/cuda_fixture.hpp"
#include "testing/process_probe.hpp"
#include "testing/test_seed.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;
using testing::HostArray;
using testing::IsOk;
using testing::max_scaled_error;
using testing::StatusIs;

DeviceOptions isolated_cuda(RestartBudget restarts = WorkerOptions{}.restarts) {
  return DeviceOptions{
      .kind = DeviceKind::cuda, .isolation = Isolation::worker_process, .worker = {.restarts = restarts}};
}

// C = A * B (row-major) through the isolated device, checked against a float64 reference.
void expect_gemm_matches(const Device& dev, std::int64_t m, std::int64_t n, std::int64_t k, DType input,
                         std::mt19937_64& rng) {
  HostArray a(input, m * k), b(input, k * n), c(DType::f32, m * n);
  a.fill_uniform(rng);
  b.fill_uniform(rng);
  auto da = *dev.ask(Allocate{.dtype = input, .count = static_cast<std::uint64_t>(m * k)}).wait();
  auto db = *dev.ask(Allocate{.dtype = input, .count = static_cast<std::uint64_t>(k * n)}).wait();
  auto dc = *dev.ask(Allocate{.dtype = DType::f32, .count = static_cast<std::uint64_t>(m * n)}).wait();
  auto up_a = dev.ask(CopyToDevice{.source = {a.bytes.data(), a.size(), input}, .destination = da});
  auto up_b = dev.ask(CopyToDevice{.source = {b.bytes.data(), b.size(), input}, .destination = db});
  auto product = dev.gemm(Gemm{
      .shape = {.m = m, .n = n, .k = k, .input_type = input, .output_type = DType::f32}, .a = da, .b = db, .c = dc});
  auto down = dev.ask(CopyToHost{.source = dc, .destination = {c.bytes.data(), c.size(), DType::f32}});
  for (auto* f : {&up_a, &up_b, &product, &down}) ASSERT_THAT(f->wait(), IsOk());
  c.decode();
  std::vector<double> expected(static_cast<std::size_t>(m * n)), scale(expected.size());
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t p = 0; p < k; ++p) {
        expected[i * n + j] += a.values[i * k + p] * b.values[p * n + j];
        scale[i * n + j] += std::abs(a.values[i * k + p] * b.values[p * n + j]);
      }
    }
  }
  EXPECT_LT(max_scaled_error(c.values, expected, scale), input == DType::f32 ? 1e-5 : 1e-2)
      << m << "x" << n << "x" << k << " " << to_string(input);
  for (const BufferHandle& h : {da, db, dc}) EXPECT_THAT(dev.free(h).wait(), IsOk());
}

TEST(CudaIsolatedTest, GemmsAndCopiesMatchTheReferenceFromAWorkerProcess) {
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, isolated_cuda(), dev);
  DeviceInfo info = *dev.info().wait();
  EXPECT_EQ(info.kind, DeviceKind::cuda);
  EXPECT_GT(info.worker_pid, 0);
  EXPECT_GE(info.compute_capability, 70);
  std::mt19937_64 rng(accel::testing::test_seed());
  for (DType input : {DType::f32, DType::bf16}) {
    expect_gemm_matches(dev, 64, 64, 64, input, rng);
    expect_gemm_matches(dev, 127, 65, 33, input, rng);
    expect_gemm_matches(dev, 512, 256, 384, input, rng);
  }
  Result<Device> stream = dev.open_stream();
  ASSERT_THAT(stream, IsOk());
  expect_gemm_matches(*stream, 96, 80, 64, DType::f32, rng);
}

TEST(CudaIsolatedTest, StreamsOfAnIsolatedDeviceShareBuffersInOrder) {
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, isolated_cuda(), dev);
  Device other = *dev.open_stream();
  std::vector<float> host(1 << 20, 3.0f), back(1 << 20, 0.0f);
  Buffer<float> x = *dev.allocate<float>(host.size()).wait();
  Buffer<float> y = *dev.allocate<float>(host.size()).wait();
  auto up = dev.upload(std::span<const float>(host), x);
  ASSERT_THAT(dev.info().wait(), IsOk());  // the upload was taken before the copy below is sent
  auto copy = other.ask(CopyOnDevice{.source = x, .destination = y, .count = host.size()});
  ASSERT_THAT(other.info().wait(), IsOk());
  auto down = dev.download(y, std::span<float>(back));
  for (auto* f : {&up, &copy, &down}) ASSERT_THAT(f->wait(), IsOk());
  EXPECT_EQ(back, host);
}

// 100 real sticky faults in one client: after each the device serves again, old handles are stale, and at the
// end no process, descriptor or device memory is left over. Every request is answered exactly once.
TEST(CudaIsolatedTest, AHundredStickyFaultsEachCostOneWorkerAndLeakNothing) {
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, isolated_cuda({.max_restarts = 1000, .window = 600'000ms, .initial_backoff = 0ms}),
                          dev);
  const DeviceInfo first = *dev.info().wait();
  const int fds = testing::count_open_fds();
  std::vector<float> host(4096, 1.5f), back(4096);
  int answered = 0, lost = 0, recovered = 0;
  std::vector<pid_t> workers = {first.worker_pid};
  for (int fault = 0; fault < 100; ++fault) {
    Buffer<float> buffer = *dev.allocate<float>(host.size()).wait();
    ASSERT_THAT(dev.upload(std::span<const float>(host), buffer).wait(), IsOk());
    auto faulting = dev.inject_fault(FaultKind::illegal_address);
    auto behind = dev.download(buffer, std::span<float>(back));
    const Result<Done> fault_reply = faulting.wait_for(60s);
    const Result<Done> behind_reply = behind.wait_for(60s);
    answered += 2;
    EXPECT_THAT(fault_reply, StatusIs(Code::context_lost, "sticky"));
    // The download was either taken by the poisoned worker (lost) or ran on the next one (its buffer is stale).
    const Code behind_code = behind_reply.status().code();
    EXPECT_TRUE(behind_code == Code::context_lost || behind_code == Code::stale_handle)
        << behind_reply.status().to_string();
    lost += fault_reply.status().code() == Code::context_lost ? 1 : 0;
    Result<DeviceInfo> info = dev.info().wait_for(60s);
    ASSERT_THAT(info, IsOk());
    workers.push_back(info->worker_pid);
    recovered += info->worker_restarts == static_cast<std::uint64_t>(fault + 1) ? 1 : 0;
    EXPECT_THAT(dev.upload(std::span<const float>(host), buffer).wait(), StatusIs(Code::stale_handle));
  }
  EXPECT_EQ(answered, 200);
  EXPECT_EQ(lost, 100);
  EXPECT_EQ(recovered, 100);
  const DeviceInfo last = *dev.info().wait();
  EXPECT_EQ(last.worker_restarts, 100u);
  EXPECT_EQ(testing::live_children().size(), 1u);
  for (std::size_t i = 0; i + 1 < workers.size(); ++i) EXPECT_TRUE(testing::process_gone(workers[i]));
  EXPECT_EQ(testing::count_open_fds(), fds);
  // The driver freed every lost context: the GPU has as much free memory as when the first worker ran.
  EXPECT_GE(last.device_free_bytes + (256ull << 20), first.device_free_bytes);
  Buffer<float> fresh = *dev.allocate<float>(host.size()).wait();
  ASSERT_THAT(dev.upload(std::span<const float>(host), fresh).wait(), IsOk());
  ASSERT_THAT(dev.download(fresh, std::span<float>(back)).wait(), IsOk());
  EXPECT_EQ(back, host);
}

// With a standby, the worker that replaces a poisoned one is already built; the device keeps serving through a
// series of faults, each answered, and keeps one standby.
TEST(CudaIsolatedTest, AStandbyWorkerTakesOverAfterStickyFaults) {
  System system;
  DeviceOptions options = isolated_cuda({.max_restarts = 100, .window = 600'000ms, .initial_backoff = 0ms});
  options.worker.standby = true;
  ACCEL_OPEN_CUDA_OR_SKIP(system, options, dev);
  std::mt19937_64 rng(accel::testing::test_seed());
  for (int fault = 0; fault < 10; ++fault) {
    const pid_t before = dev.info().wait()->worker_pid;
    EXPECT_THAT(dev.inject_fault(FaultKind::illegal_address).wait_for(60s), StatusIs(Code::context_lost));
    Result<DeviceInfo> info = dev.info().wait_for(60s);
    ASSERT_THAT(info, IsOk());
    EXPECT_NE(info->worker_pid, before);
    EXPECT_EQ(info->worker_restarts, static_cast<std::uint64_t>(fault + 1));
  }
  expect_gemm_matches(dev, 128, 96, 64, DType::bf16, rng);
  EXPECT_LE(testing::live_children().size(), 2u);
}

// SIGKILL of the worker mid-stream while 16 client threads run GEMMs and copies: every request is answered,
// with success or with the error its buffers' fate explains; none is lost or answered twice.
TEST(CudaIsolatedTest, SigkillUnderLoadFromSixteenThreadsLosesNoRequest) {
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, isolated_cuda(), dev);
  constexpr int kThreads = 16;
  constexpr std::int64_t kSize = 64;
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> sent{0}, callbacks{0}, succeeded{0}, lost{0}, stale{0}, other{0};
  auto count = [&](const Status& status) {
    callbacks.fetch_add(1);
    switch (status.code()) {
      case Code::ok: succeeded.fetch_add(1); break;
      case Code::context_lost: lost.fetch_add(1); break;
      case Code::stale_handle: stale.fetch_add(1); break;
      default: other.fetch_add(1);
    }
  };
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&] {
      std::vector<float> host(kSize * kSize, 0.5f), back(kSize * kSize);
      while (!stop.load()) {
        std::vector<Result<Buffer<float>>> buffers;
        for (int i = 0; i < 3; ++i) {
          buffers.push_back(dev.allocate<float>(kSize * kSize).wait());
          sent.fetch_add(1);
          count(buffers.back().status());
        }
        if (!buffers[0].ok() || !buffers[1].ok() || !buffers[2].ok()) continue;
        std::vector<Future<Done>> futures;
        futures.push_back(dev.upload(std::span<const float>(host), *buffers[0]));
        futures.push_back(dev.upload(std::span<const float>(host), *buffers[1]));
        for (int i = 0; i < 8; ++i) {
          futures.push_back(dev.gemm(Gemm{
              .shape = {.m = kSize, .n = kSize, .k = kSize}, .a = *buffers[0], .b = *buffers[1], .c = *buffers[2]}));
        }
        futures.push_back(dev.download(*buffers[2], std::span<float>(back)));
        sent.fetch_add(static_cast<std::int64_t>(futures.size()));
        for (auto& f : futures) {
          Result<Done> done = f.wait_for(60s);
          ASSERT_NE(done.status().code(), Code::deadline_exceeded) << "a request was never answered";
          count(done.status());
        }
      }
    });
  }
  std::this_thread::sleep_for(1s);
  const pid_t victim = dev.info().wait()->worker_pid;
  ASSERT_TRUE(testing::kill_process(victim));
  std::this_thread::sleep_for(2s);
  stop.store(true);
  for (auto& client : clients) client.join();
  EXPECT_EQ(callbacks.load(), sent.load());
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(lost.load() + stale.load(), 0);
  EXPECT_GT(succeeded.load(), 0);
  const DeviceInfo info = *dev.info().wait();
  EXPECT_EQ(info.worker_restarts, 1u);
  EXPECT_NE(info.worker_pid, victim);
  std::printf("sigkill under load: %lld requests, %lld ok, %lld context_lost, %lld stale_handle\n",
              static_cast<long long>(sent.load()), static_cast<long long>(succeeded.load()),
              static_cast<long long>(lost.load()), static_cast<long long>(stale.load()));
}

}  // namespace
}  // namespace accel

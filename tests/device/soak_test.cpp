// The soak: 16 threads send a random mix of requests to one device — uploads and downloads checked element by
// element, copies on the device, GEMMs checked against a naive product, compiled graphs (a bucketed dense layer)
// checked likewise, frees, and requests on freed buffers on purpose — and every request is answered exactly once with
// the answer its kind must have; afterwards nothing is left behind (live buffers and bytes in use, descriptors,
// threads, worker processes).
//
// CI runs it small; ACCEL_SOAK_REQUESTS sets the total (e.g. 1000000 on the GPU machine, where the CUDA cases run).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/graph/execute.hpp"
#include "testing/process_probe.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using namespace std::chrono_literals;

constexpr int kThreads = 16;
constexpr auto kAnswerDeadline = 60s;  // a request not answered by then is counted lost

std::uint64_t total_requests() {
  const char* named = std::getenv("ACCEL_SOAK_REQUESTS");
  return named != nullptr ? std::strtoull(named, nullptr, 10) : 16 * 3000;
}

int count_threads() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++count;
  return count;
}

// The count once threads that were ending have ended (libgomp's team threads end after the thread that led them):
// the same twice 100 ms apart, or the last of 50 tries.
int settled_thread_count() {
  int last = count_threads();
  for (int tries = 0; tries < 50; ++tries) {
    std::this_thread::sleep_for(100ms);
    const int now = count_threads();
    if (now == last) break;
    last = now;
  }
  return last;
}

// What the threads saw, summed.
struct Tally {
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> answered{0};
  std::atomic<std::uint64_t> lost{0};   // no answer within the deadline
  std::atomic<std::uint64_t> wrong{0};  // an answer other than the one the request must get
  std::atomic<std::uint64_t> stale_refused{0};

  template <class T>
  Result<T> await(Future<T> future) {
    sent.fetch_add(1, std::memory_order_relaxed);
    Result<T> result = future.wait_for(kAnswerDeadline);
    if (!result.ok() && result.status().code() == Code::deadline_exceeded) {
      lost.fetch_add(1, std::memory_order_relaxed);
    } else {
      answered.fetch_add(1, std::memory_order_relaxed);
    }
    return result;
  }
  void expect(bool ok) {
    if (!ok) wrong.fetch_add(1, std::memory_order_relaxed);
  }
};

// A compiled graph every thread runs: y = relu(x w + b), x [rows, 8] with rows bucketed by powers of two, so that
// the soak's row counts (1 to 24) share a few executables; its weights uploaded once, read by every thread.
struct DenseLayer {
  static constexpr std::int64_t kWidth = 8;
  std::shared_ptr<const graph::Graph> graph;
  std::vector<float> w, b;
  Buffer<std::uint8_t> weights;

  static DenseLayer make(const Device& device) {
    graph::GraphBuilder builder;
    builder.bucket("rows", graph::Ladder::powers_of_two(1, 32));
    const graph::Tensor x = builder.input("x", DType::f32, {graph::Dim::sym("rows"), graph::Dim::of(kWidth)});
    const graph::Tensor w = builder.parameter("w", DType::f32, {graph::Dim::of(kWidth), graph::Dim::of(kWidth)});
    const graph::Tensor b = builder.parameter("b", DType::f32, {graph::Dim::of(kWidth)});
    builder.output("y", builder.matmul(x, w, {.bias = b, .activation = Activation::relu}));
    DenseLayer layer;
    Result<std::shared_ptr<const graph::Graph>> built = builder.build();
    EXPECT_THAT(built, testing::IsOk());
    if (!built.ok()) return layer;
    layer.graph = *built;
    std::mt19937 rng(99);
    std::uniform_real_distribution<float> value(-1, 1);
    layer.w.resize(kWidth * kWidth);
    layer.b.resize(kWidth);
    for (float& e : layer.w) e = value(rng);
    for (float& e : layer.b) e = value(rng);
    std::vector<std::uint8_t> bytes(layer.graph->weight_bytes());
    std::memcpy(bytes.data() + layer.graph->parameter("w")->offset, layer.w.data(), layer.w.size() * sizeof(float));
    std::memcpy(bytes.data() + layer.graph->parameter("b")->offset, layer.b.data(), layer.b.size() * sizeof(float));
    Result<Buffer<std::uint8_t>> weights = device.allocate<std::uint8_t>(bytes.size()).wait();
    EXPECT_THAT(weights, testing::IsOk());
    if (!weights.ok()) return layer;
    EXPECT_THAT(device.upload(std::span<const std::uint8_t>(bytes), *weights).wait(), testing::IsOk());
    layer.weights = *weights;
    return layer;
  }

  // Runs the layer on `rows` random rows and checks y against the product on the host; the requests it sent.
  std::uint64_t run(const Device& device, std::int64_t rows, std::mt19937& rng, Tally& tally) const {
    std::uniform_real_distribution<float> value(-1, 1);
    const auto count = static_cast<std::uint64_t>(rows * kWidth);
    std::vector<float> x(count), y(count);
    for (float& e : x) e = value(rng);
    Result<Buffer<float>> input = tally.await(device.allocate<float>(count));
    Result<Buffer<float>> output = tally.await(device.allocate<float>(count));
    tally.expect(input.ok() && output.ok());
    if (!input.ok() || !output.ok()) return 2;
    tally.expect(tally.await(device.upload(std::span<const float>(x), *input)).ok());
    tally.expect(tally
                     .await(device.ask(graph::Execute{.graph = graph,
                                                      .symbols = {{"rows", rows}},
                                                      .weights = weights,
                                                      .inputs = {{"x", *input}},
                                                      .outputs = {{"y", *output}}}))
                     .ok());
    tally.expect(tally.await(device.download(*output, std::span<float>(y))).ok());
    bool close = true;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < kWidth; ++j) {
        double sum = b[static_cast<std::size_t>(j)];
        for (std::int64_t p = 0; p < kWidth; ++p)
          sum += double{x[static_cast<std::size_t>(r * kWidth + p)]} * w[static_cast<std::size_t>(p * kWidth + j)];
        const double expected = std::max(sum, 0.0);
        close = close && std::abs(y[static_cast<std::size_t>(r * kWidth + j)] - expected) <= 1e-4 * (1 + expected);
      }
    tally.expect(close);
    tally.expect(tally.await(device.free(*input)).ok());
    tally.expect(tally.await(device.free(*output)).ok());
    return 7;
  }
};

// One thread's share: requests in random order over a few buffers of its own.
void soak(const Device& device, const DenseLayer& layer, std::uint64_t requests, std::uint32_t seed, Tally& tally) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, 6);
  std::uniform_int_distribution<int> small(1, 24);
  std::uniform_real_distribution<float> value(-1, 1);
  for (std::uint64_t sent = 0; sent < requests;) {
    const int kind = pick(rng);
    const auto n = static_cast<std::uint64_t>(small(rng));
    Result<Buffer<float>> buffer = tally.await(device.allocate<float>(n * n));
    ++sent;
    tally.expect(buffer.ok());
    if (!buffer.ok()) continue;
    std::vector<float> host(n * n), back(n * n);
    for (float& x : host) x = value(rng);
    tally.expect(tally.await(device.upload(std::span<const float>(host), *buffer)).ok());
    ++sent;
    if (kind == 0 || kind == 1) {  // round trip, element by element
      tally.expect(tally.await(device.download(*buffer, std::span<float>(back))).ok() && back == host);
      ++sent;
    } else if (kind == 2) {  // a copy on the device, then back
      Result<Buffer<float>> copy = tally.await(device.allocate<float>(n * n));
      tally.expect(copy.ok());
      if (copy.ok()) {
        tally.expect(
            tally.await(device.ask(CopyOnDevice{.source = *buffer, .destination = *copy, .count = n * n})).ok());
        tally.expect(tally.await(device.download(*copy, std::span<float>(back))).ok() && back == host);
        tally.expect(tally.await(device.free(*copy)).ok());
        sent += 3;
      }
      ++sent;
    } else if (kind == 3) {  // C = A * A, n x n, against a naive product
      Result<Buffer<float>> c = tally.await(device.allocate<float>(n * n));
      tally.expect(c.ok());
      if (c.ok()) {
        const auto m = static_cast<std::int64_t>(n);
        Gemm gemm{.shape = {.m = m, .n = m, .k = m}, .a = *buffer, .b = *buffer, .c = *c};
        tally.expect(tally.await(device.gemm(gemm)).ok());
        tally.expect(tally.await(device.download(*c, std::span<float>(back))).ok());
        bool close = true;
        for (std::uint64_t i = 0; i < n; ++i)
          for (std::uint64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (std::uint64_t p = 0; p < n; ++p) sum += double{host[i * n + p]} * host[p * n + j];
            close = close && std::abs(back[i * n + j] - sum) <= 1e-4 * (1 + std::abs(sum));
          }
        tally.expect(close);
        tally.expect(tally.await(device.free(*c)).ok());
        sent += 3;
      }
      ++sent;
    } else if (kind == 4) {  // a freed buffer, used on purpose: refused as stale, never read
      const BufferHandle handle = *buffer;
      tally.expect(tally.await(device.free(handle)).ok());
      Result<Done> stale = tally.await(device.download(*buffer, std::span<float>(back)));
      tally.expect(stale.status().code() == Code::stale_handle);
      if (stale.status().code() == Code::stale_handle) tally.stale_refused.fetch_add(1, std::memory_order_relaxed);
      sent += 2;
      continue;
    } else if (kind == 6) {  // the compiled graph over n rows
      sent += layer.run(device, static_cast<std::int64_t>(n), rng, tally);
    }
    tally.expect(tally.await(device.free(*buffer)).ok());  // kind 5: allocate, upload, free
    ++sent;
  }
}

struct SoakCase {
  std::string name;
  DeviceOptions options;
};

class SoakTest : public ::testing::TestWithParam<SoakCase> {};

TEST_P(SoakTest, EveryRequestIsAnsweredOnceAndNothingLeaks) {
  System system;
  // A first device opened and closed before the baseline: an in-process CUDA device leaves the driver's own threads
  // and descriptors for the life of the process (the H100 run counted them as leaks), which are not the soak's.
  {
    // The CUDA cases skip where the driver finds no GPU (or the build has no CUDA tier); nothing else skips, so a
    // worker that cannot start fails the isolated cases.
    if (GetParam().options.kind == DeviceKind::cuda && Device::count(DeviceKind::cuda) == 0)
      GTEST_SKIP() << "no CUDA GPU here";
    Result<Device> first = Device::open(system, GetParam().options);
    ASSERT_THAT(first, testing::IsOk());
    // It runs the layer once too: LLVM's OpenMP runtime (the clang sanitizer builds') keeps the threads of the CPU
    // device's first parallel region for the life of the process, which are not the soak's either.
    const DenseLayer layer = DenseLayer::make(*first);
    ASSERT_NE(layer.graph, nullptr);
    std::mt19937 rng(7);
    Tally warm_up;
    layer.run(*first, 24, rng, warm_up);
    EXPECT_EQ(warm_up.wrong.load(), 0u);
    ASSERT_THAT(first->free(layer.weights).wait(), testing::IsOk());
    ASSERT_THAT(first->close().wait(), testing::IsOk());
  }
  const int fds_before = testing::count_open_fds();
  const int threads_before = settled_thread_count();
  {
    Result<Device> opened = Device::open(system, GetParam().options);
    ASSERT_THAT(opened, testing::IsOk());
    const Device& device = *opened;
    const DenseLayer layer = DenseLayer::make(device);
    ASSERT_NE(layer.graph, nullptr);
    const std::uint64_t per_thread = std::max<std::uint64_t>(total_requests() / kThreads, 1);
    Tally tally;
    const auto start = std::chrono::steady_clock::now();
    {
      std::vector<std::jthread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] { soak(device, layer, per_thread, static_cast<std::uint32_t>(1000 + t), tally); });
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    RecordProperty("requests", static_cast<int>(tally.sent.load()));
    RecordProperty("requests_per_second", static_cast<int>(static_cast<double>(tally.sent.load()) / seconds));
    EXPECT_EQ(tally.answered.load(), tally.sent.load());
    EXPECT_EQ(tally.lost.load(), 0u);
    EXPECT_EQ(tally.wrong.load(), 0u);
    EXPECT_GT(tally.stale_refused.load(), 0u);
    std::printf("soak %s: %llu requests answered in %.2f s, %llu stale handles refused, %llu wrong, %llu lost\n",
                GetParam().name.c_str(), static_cast<unsigned long long>(tally.answered.load()), seconds,
                static_cast<unsigned long long>(tally.stale_refused.load()),
                static_cast<unsigned long long>(tally.wrong.load()),
                static_cast<unsigned long long>(tally.lost.load()));

    ASSERT_THAT(device.free(layer.weights).wait(), testing::IsOk());  // before the count of live buffers
    Result<DeviceInfo> info = device.info().wait();
    ASSERT_THAT(info, testing::IsOk());
    EXPECT_EQ(info->memory.live_buffers, 0u);
    EXPECT_EQ(info->memory.in_use_bytes, 0u);
    ASSERT_THAT(device.close().wait(), testing::IsOk());
  }
  // A closed device leaves no worker, descriptor or thread behind (the worker's reaping may take a moment).
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while ((!testing::live_children().empty() || count_threads() > threads_before) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(testing::live_children().empty());
  EXPECT_LE(count_threads(), threads_before);
  EXPECT_LE(testing::count_open_fds(), fds_before);
}

// This file builds two binaries: soak_test (label device) with the CPU cases, which never skip, and cuda_soak_test
// (label gpu, ACCEL_SOAK_CUDA) with the CUDA cases, which skip where there is no GPU.
#if ACCEL_SOAK_CUDA
INSTANTIATE_TEST_SUITE_P(
    Devices, SoakTest,
    ::testing::Values(SoakCase{"cuda", {.kind = DeviceKind::cuda}},
                      SoakCase{"cuda_isolated", {.kind = DeviceKind::cuda, .isolation = Isolation::worker_process}}),
    [](const ::testing::TestParamInfo<SoakCase>& info) { return info.param.name; });
#else
INSTANTIATE_TEST_SUITE_P(Devices, SoakTest,
                         ::testing::Values(SoakCase{"cpu", {.kind = DeviceKind::cpu}},
                                           SoakCase{"cpu_isolated",
                                                    {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process}}),
                         [](const ::testing::TestParamInfo<SoakCase>& info) { return info.param.name; });
#endif

}  // namespace
}  // namespace accel

// The CUDA device on the GPU: memory, copies, ordering across streams, error handling and the completion
// strategies. Skipped without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "accel/libs/blas/gemm.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::StatusIs;

class CudaDeviceTest : public ::testing::TestWithParam<CompletionStrategy> {
 protected:
  DeviceOptions options() const { return {.kind = DeviceKind::cuda, .completion = GetParam()}; }
  std::vector<float> random_floats(std::size_t n) {
    std::uniform_real_distribution<float> uniform(-1, 1);
    std::vector<float> v(n);
    for (float& x : v) x = uniform(rng_);
    return v;
  }
  System system_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_P(CudaDeviceTest, RoundTripsThroughPageableAndPinnedMemory) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), device);
  // 12 MiB and 20 MiB + 28 bytes go through two pinned blocks in turn (kUploadChunkBytes), the last one partly.
  for (std::size_t n : {1ul, 1000ul, 3ul << 20, (5ul << 20) + 7}) {
    const std::vector<float> host = random_floats(n);
    Buffer<float> buffer = *device.allocate<float>(n).wait();
    ASSERT_THAT(device.upload(std::span<const float>(host), buffer).wait(), IsOk());
    std::vector<float> back(n, NAN);
    ASSERT_THAT(device.download(buffer, std::span<float>(back)).wait(), IsOk());
    EXPECT_EQ(back, host);

    float* pinned = nullptr;
    ASSERT_EQ(cudaMallocHost(&pinned, n * sizeof(float)), cudaSuccess);
    std::fill(pinned, pinned + n, NAN);
    ASSERT_THAT(device.download(buffer, std::span<float>(pinned, n)).wait(), IsOk());
    EXPECT_TRUE(std::equal(host.begin(), host.end(), pinned));
    const std::vector<float> second = random_floats(n);
    std::copy(second.begin(), second.end(), pinned);
    ASSERT_THAT(device.upload(std::span<const float>(pinned, n), buffer).wait(), IsOk());
    ASSERT_THAT(device.download(buffer, std::span<float>(back)).wait(), IsOk());
    EXPECT_EQ(back, second);
    cudaFreeHost(pinned);
  }
}

// Host memory pinned at its start only (its first half registered) is copied as pageable memory is, whole.
TEST_P(CudaDeviceTest, RoundTripsThroughHostMemoryPinnedOnlyInPart) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), device);
  constexpr std::size_t n = 1 << 18;  // 1 MiB, staged whole (under kUploadChunkBytes twice)
  std::vector<float> host = random_floats(n), back(n, NAN);
  ASSERT_EQ(cudaHostRegister(host.data(), n / 2 * sizeof(float), cudaHostRegisterDefault), cudaSuccess);
  ASSERT_EQ(cudaHostRegister(back.data(), n / 2 * sizeof(float), cudaHostRegisterDefault), cudaSuccess);
  Buffer<float> buffer = *device.allocate<float>(n).wait();
  EXPECT_THAT(device.upload(std::span<const float>(host), buffer).wait(), IsOk());
  EXPECT_THAT(device.download(buffer, std::span<float>(back)).wait(), IsOk());
  EXPECT_EQ(back, host);
  ASSERT_EQ(cudaHostUnregister(host.data()), cudaSuccess);
  ASSERT_EQ(cudaHostUnregister(back.data()), cudaSuccess);
}

TEST_P(CudaDeviceTest, CopiesOnDeviceIncludingOverlappingRanges) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), device);
  std::vector<float> host(1000);
  std::iota(host.begin(), host.end(), 0.0f);
  Buffer<float> a = *device.allocate<float>(1000).wait();
  Buffer<float> b = *device.allocate<float>(1000).wait();
  ASSERT_THAT(device.upload(std::span<const float>(host), a).wait(), IsOk());
  ASSERT_THAT(device.ask(CopyOnDevice{.source = a, .source_offset = 100, .destination = b, .count = 500}).wait(),
              IsOk());
  ASSERT_THAT(
      device
          .ask(CopyOnDevice{.source = a, .source_offset = 0, .destination = a, .destination_offset = 10, .count = 900})
          .wait(),
      IsOk());
  std::vector<float> got_a(1000), got_b(1000);
  ASSERT_THAT(device.download(a, std::span<float>(got_a)).wait(), IsOk());
  ASSERT_THAT(device.download(b, std::span<float>(got_b)).wait(), IsOk());
  std::vector<float> expected_a = host;
  std::copy(host.begin(), host.begin() + 900, expected_a.begin() + 10);
  EXPECT_EQ(got_a, expected_a);
  EXPECT_TRUE(std::equal(got_b.begin(), got_b.begin() + 500, host.begin() + 100));
}

// Copies under 1 MiB are a kernel of ours, 16 bytes a thread where both ends are 16-byte aligned and a byte a thread
// otherwise; from 1 MiB on, cudaMemcpyAsync (operation/cuda_copy.hpp). Every size around the word and the threshold,
// at every alignment of either end, copies exactly its bytes and touches none around them.
TEST_P(CudaDeviceTest, CopiesOnDeviceOfEverySizeAndAlignmentMoveExactlyTheirBytes) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), device);
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  constexpr std::size_t kRoom = kMiB + 64;
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::uint8_t> source_bytes(kRoom), before(kRoom);
  for (auto& b : source_bytes) b = static_cast<std::uint8_t>(byte(rng_));
  for (auto& b : before) b = static_cast<std::uint8_t>(byte(rng_));
  Buffer<std::uint8_t> source = *device.allocate<std::uint8_t>(kRoom).wait();
  Buffer<std::uint8_t> destination = *device.allocate<std::uint8_t>(kRoom).wait();
  ASSERT_THAT(device.upload(std::span<const std::uint8_t>(source_bytes), source).wait(), IsOk());
  std::vector<std::uint8_t> got(kRoom);
  const std::pair<std::size_t, std::size_t> offsets[] = {{0, 0}, {1, 1}, {16, 0}, {0, 8}, {3, 32}, {17, 5}};
  for (const std::size_t count : {1ul, 15ul, 16ul, 17ul, 255ul, 4099ul, kMiB - 1, kMiB, kMiB + 17}) {
    for (const auto& [from, to] : offsets) {
      SCOPED_TRACE(::testing::Message() << count << " bytes from +" << from << " to +" << to);
      ASSERT_THAT(device.upload(std::span<const std::uint8_t>(before), destination).wait(), IsOk());
      ASSERT_THAT(device
                      .ask(CopyOnDevice{.source = source,
                                        .source_offset = from,
                                        .destination = destination,
                                        .destination_offset = to,
                                        .count = count})
                      .wait(),
                  IsOk());
      ASSERT_THAT(device.download(destination, std::span<std::uint8_t>(got)).wait(), IsOk());
      std::vector<std::uint8_t> expected = before;
      std::copy_n(source_bytes.begin() + static_cast<std::ptrdiff_t>(from), count,
                  expected.begin() + static_cast<std::ptrdiff_t>(to));
      ASSERT_TRUE(got == expected);
    }
  }
}

TEST_P(CudaDeviceTest, RefusesBadRequestsBeforeLaunchingAndKeepsServing) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), device);
  Buffer<float> a = *device.allocate<float>(16).wait();
  std::vector<float> host(32);
  std::vector<double> wrong(16);
  EXPECT_THAT(device.upload(std::span<const float>(host), a).wait(), StatusIs(Code::invalid_argument, "outside"));
  EXPECT_THAT(
      device.ask(CopyToDevice{.source = HostSource::of(std::span<const double>(wrong)), .destination = a}).wait(),
      StatusIs(Code::invalid_argument, "f64"));
  EXPECT_THAT(device.ask(Allocate{.count = 0}).wait(), StatusIs(Code::invalid_argument));
  const BufferHandle stale = a;
  ASSERT_THAT(device.free(a).wait(), IsOk());
  EXPECT_THAT(device.download(a, std::span<float>(host.data(), 16)).wait(), StatusIs(Code::stale_handle, "freed"));
  EXPECT_THAT(device.free(stale).wait(), StatusIs(Code::stale_handle));

  Buffer<float> b = *device.allocate<float>(16).wait();
  ASSERT_THAT(device.reset().wait(), IsOk());
  EXPECT_THAT(device.download(b, std::span<float>(host.data(), 16)).wait(), StatusIs(Code::stale_handle, "epoch"));

  System other_system;
  Device cpu = *Device::open(other_system, {.kind = DeviceKind::cpu});
  Buffer<float> on_cpu = *cpu.allocate<float>(16).wait();
  EXPECT_THAT(device.download(on_cpu, std::span<float>(host.data(), 16)).wait(),
              StatusIs(Code::invalid_argument, "another device"));

  Buffer<float> c = *device.allocate<float>(16).wait();
  EXPECT_THAT(device.upload(std::span<const float>(host.data(), 16), c).wait(), IsOk());
}

TEST_P(CudaDeviceTest, OutOfMemoryFailsOneRequestAndTheDeviceKeepsServing) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), device);
  const DeviceInfo before = *device.info().wait();
  const std::uint64_t too_many = before.memory_capacity_bytes;  // floats: four times the GPU's memory
  EXPECT_THAT(device.ask(Allocate{.dtype = DType::f32, .count = too_many}).wait(),
              StatusIs(Code::resource_exhausted, "allocating"));
  EXPECT_EQ(device.info().wait()->memory.failed_allocations, before.memory.failed_allocations + 1);
  EXPECT_THAT(device.health(), IsOk());
  Buffer<float> ok = *device.allocate<float>(1 << 20).wait();
  const std::vector<float> host = random_floats(1 << 20);
  std::vector<float> back(1 << 20);
  ASSERT_THAT(device.upload(std::span<const float>(host), ok).wait(), IsOk());
  ASSERT_THAT(device.download(ok, std::span<float>(back)).wait(), IsOk());
  EXPECT_EQ(back, host);
}

TEST_P(CudaDeviceTest, MemoryStatisticsFollowAllocationsAndTheLimit) {
  DeviceOptions limited = options();
  limited.memory_limit_bytes = 64 << 20;
  ACCEL_OPEN_CUDA_OR_SKIP(system_, limited, device);
  const DeviceInfo start = *device.info().wait();
  {
    Buffer<float> a = *device.allocate<float>(4 << 20).wait();
    const DeviceInfo during = *device.info().wait();
    EXPECT_EQ(during.memory.in_use_bytes, start.memory.in_use_bytes + (16 << 20));
    EXPECT_GE(during.memory.reserved_bytes, during.memory.in_use_bytes);
    EXPECT_THAT(device.allocate<float>(13 << 20).wait(), StatusIs(Code::resource_exhausted, "memory limit"));
  }
  const DeviceInfo after = *device.info().wait();  // the Buffer's last owner freed it
  EXPECT_EQ(after.memory.in_use_bytes, start.memory.in_use_bytes);
  EXPECT_EQ(after.memory.peak_bytes, start.memory.in_use_bytes + (16 << 20));
}

// Writer and reader on different streams, many rounds, nothing waited for on the host between them: every
// round's reader must see that round's data (read after write), and the next write must not overwrite data a
// reader has not copied yet (write after read).
TEST_P(CudaDeviceTest, BuffersAreOrderedAcrossStreams) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), writer);
  Result<Device> reader_opened = writer.open_stream();
  ASSERT_THAT(reader_opened, IsOk());
  Device reader = *reader_opened;

  constexpr std::int64_t n = 2048;
  constexpr int rounds = 40;
  std::uniform_int_distribution<int> small(-2, 2);
  std::vector<float> host_a(n * n), host_b(n * n);
  for (float& x : host_a) x = static_cast<float>(small(rng_));
  for (float& x : host_b) x = static_cast<float>(small(rng_));
  Buffer<float> a = *writer.allocate<float>(n * n).wait();
  Buffer<float> b = *writer.allocate<float>(n * n).wait();
  Buffer<float> x = *writer.allocate<float>(n * n).wait();
  ASSERT_THAT(writer.upload(std::span<const float>(host_a), a).wait(), IsOk());
  ASSERT_THAT(writer.upload(std::span<const float>(host_b), b).wait(), IsOk());
  std::vector<Buffer<float>> copies;
  for (int i = 0; i < rounds; ++i) copies.push_back(*reader.allocate<float>(n * n).wait());

  std::vector<Future<Done>> pending;
  for (int round = 0; round < rounds; ++round) {
    // x = (round + 1) * a b, exact in f32: small integers.
    pending.push_back(writer.gemm(
        {.shape = {.m = n, .n = n, .k = n}, .a = a, .b = b, .c = x, .alpha = static_cast<double>(round + 1)}));
    ASSERT_THAT(writer.info().wait(), IsOk());  // the GEMM is enqueued (not finished) before the copy is sent
    pending.push_back(reader.ask(CopyOnDevice{.source = x, .destination = copies[round], .count = n * n}));
    ASSERT_THAT(reader.info().wait(), IsOk());  // the copy is enqueued before the next GEMM is sent
  }
  for (Future<Done>& f : pending) ASSERT_THAT(f.wait(), IsOk());

  std::vector<float> first(n * n);
  ASSERT_THAT(reader.download(copies[0], std::span<float>(first)).wait(), IsOk());
  for (int probe = 0; probe < 64; ++probe) {
    const std::int64_t i = (probe * 7919) % n, j = (probe * 104729) % n;
    double dot = 0;
    for (std::int64_t p = 0; p < n; ++p) dot += host_a[i * n + p] * host_b[p * n + j];
    ASSERT_EQ(first[i * n + j], static_cast<float>(dot)) << "element " << i << "," << j;
  }
  std::vector<float> got(n * n);
  for (int round = 1; round < rounds; ++round) {
    ASSERT_THAT(reader.download(copies[round], std::span<float>(got)).wait(), IsOk());
    std::size_t wrong = 0;
    for (std::size_t e = 0; e < got.size(); ++e) wrong += got[e] != first[e] * static_cast<float>(round + 1);
    ASSERT_EQ(wrong, 0u) << "round " << round << " read " << wrong << " elements of another round";
  }
}

// Stream A: a chain of GEMMs adding to X, then X downloaded into pinned host memory H. Stream B: waits for A's
// fence, then uploads H into Y. Nothing of A's was waited for on the host, and H is host memory, which the
// buffers' ordering does not see: only the fence (an event B waits for on the GPU) puts B's upload after A's
// download. Without it B's upload would read H at once, while A still computes.
// The run shows the fence only if A still computes when the fence comes back to the host; a host held up for
// longer than the chain takes (a loaded machine) shows nothing, so the chain is made four times longer and run
// again, up to 512 GEMMs (over a second on an H200; x stays an exact f32 integer: 512 n = 2^21 < 2^24).
TEST_P(CudaDeviceTest, AFenceOrdersAnotherStreamAfterItWithoutAHostWait) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), a);
  Result<Device> b_opened = a.open_stream();
  ASSERT_THAT(b_opened, IsOk());
  Device b = *b_opened;
  constexpr std::int64_t n = 4096;
  Buffer<float> ones = *a.allocate<float>(n * n).wait();
  Buffer<float> x = *a.allocate<float>(n * n).wait();
  Buffer<float> y = *b.allocate<float>(n * n).wait();
  ASSERT_THAT(a.upload(std::span<const float>(std::vector<float>(n * n, 1.0f)), ones).wait(), IsOk());
  float* host = nullptr;
  ASSERT_EQ(cudaMallocHost(&host, n * n * sizeof(float)), cudaSuccess);
  std::vector<float> got(n * n);
  // The blocking strategy waits for each request before the next, so only the others show the fence's point.
  const bool shows_the_point = GetParam() != CompletionStrategy::blocking;
  bool a_still_running = false;
  for (int rounds = 32;; rounds *= 4) {
    SCOPED_TRACE(std::to_string(rounds) + " GEMMs");
    ASSERT_THAT(a.upload(std::span<const float>(std::vector<float>(n * n, 0.0f)), x).wait(), IsOk());
    std::fill(host, host + n * n, -1.0f);
    std::vector<Future<Done>> chain;
    for (int round = 0; round < rounds; ++round) {
      // x += ones * ones: every element grows by n each round, exactly in f32.
      chain.push_back(a.gemm({.shape = {.m = n, .n = n, .k = n}, .a = ones, .b = ones, .c = x, .beta = 1.0}));
    }
    chain.push_back(a.download(x, std::span<float>(host, n * n)));
    const Result<Fence> fence = a.record_fence().wait();
    a_still_running = !chain.back().ready();
    ASSERT_THAT(fence, IsOk());
    ASSERT_THAT(b.wait_fence(*fence).wait(), IsOk());
    ASSERT_THAT(b.upload(std::span<const float>(host, n * n), y).wait(), IsOk());
    for (Future<Done>& step : chain) ASSERT_THAT(step.wait(), IsOk());
    ASSERT_THAT(b.download(y, std::span<float>(got)).wait(), IsOk());
    const float expected = static_cast<float>(rounds * n);
    EXPECT_EQ(std::count(got.begin(), got.end(), expected), n * n) << "B read H before A's download had written it";
    if (!shows_the_point || a_still_running || rounds >= 512) break;
  }
  cudaFreeHost(host);
  if (shows_the_point) {
    EXPECT_TRUE(a_still_running) << "even 512 GEMMs finished before the fence came back";
  }
}

TEST_P(CudaDeviceTest, FencesAreRefusedWhenForeignOrStale) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), device);
  Device stream = *device.open_stream();
  const Fence fence = *device.record_fence().wait();
  EXPECT_THAT(device.wait_fence(fence).wait(), IsOk());  // its own stream: already in order
  EXPECT_THAT(stream.wait_fence(fence).wait(), IsOk());
  EXPECT_THAT(stream.wait_fence(Fence{}).wait(), StatusIs(Code::invalid_argument, "null"));
  Fence never_recorded = fence;
  never_recorded.sequence += 100;
  EXPECT_THAT(stream.wait_fence(never_recorded).wait(), StatusIs(Code::invalid_argument, "never recorded"));
  System other_system;
  Device cpu = *Device::open(other_system, {.kind = DeviceKind::cpu});
  EXPECT_THAT(stream.wait_fence(*cpu.record_fence().wait()).wait(), StatusIs(Code::invalid_argument, "another device"));
  for (int i = 0; i < 1000; ++i) ASSERT_THAT(device.record_fence().wait(), IsOk());  // reached ones are forgotten
  EXPECT_THAT(stream.wait_fence(fence).wait(), IsOk());
  ASSERT_THAT(device.reset().wait(), IsOk());
  EXPECT_THAT(stream.wait_fence(fence).wait(), StatusIs(Code::stale_handle, "rebuilt"));
}

// The pool keeps freed memory (release threshold "keep everything"); closing the device destroys it.
TEST_P(CudaDeviceTest, ClosingTheDeviceGivesItsMemoryBackToTheGpu) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), device);
  Device observer = *Device::open(system_, options());
  constexpr std::uint64_t kBytes = 1ull << 30;
  {
    Buffer<float> big = *device.allocate<float>(kBytes / sizeof(float)).wait();
    ASSERT_THAT(device.upload(std::span<const float>(std::vector<float>(16, 1.0f)), big).wait(), IsOk());
  }
  ASSERT_THAT(device.info().wait(), IsOk());  // the buffer is freed into the pool, which keeps it
  const std::uint64_t free_before = observer.info().wait()->device_free_bytes;
  ASSERT_THAT(device.close().wait(), IsOk());
  const std::uint64_t free_after = observer.info().wait()->device_free_bytes;
  EXPECT_GE(free_after, free_before + kBytes - (64ull << 20));
  EXPECT_THAT(device.info().wait(), StatusIs(Code::failed_precondition, "closed"));
  EXPECT_THAT(device.open_stream(), StatusIs(Code::failed_precondition, "closed"));
}

// Small requests back to back, a few in flight at a time, each answered once and in order. Under host_callback,
// CUDA's callback thread and the watcher race for every completion: a watcher that queried a request its callback
// had just finished (and whose event it had given back) crashed in one of three runs of this test on the H200
// (PERFORMANCE.md §53).
TEST_P(CudaDeviceTest, TensOfThousandsOfSmallRequestsAreEachAnsweredOnce) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), device);
  constexpr int kRounds = 3000, kInFlight = 16;
  Buffer<float> buffer = *device.allocate<float>(kInFlight).wait();
  std::vector<float> values(kInFlight);
  std::vector<Future<Done>> sent;
  for (int round = 0; round < kRounds; ++round) {
    sent.clear();
    for (int i = 0; i < kInFlight; ++i) {
      values[i] = static_cast<float>(round * kInFlight + i);
      sent.push_back(device.upload(std::span<const float>(&values[i], 1), buffer, i));
    }
    for (Future<Done>& answer : sent) ASSERT_THAT(answer.wait(), IsOk()) << "round " << round;
  }
  std::vector<float> back(kInFlight, NAN);
  ASSERT_THAT(device.download(buffer, std::span<float>(back)).wait(), IsOk());
  EXPECT_EQ(back, values);
}

TEST_P(CudaDeviceTest, ReportsItselfAndItsCompletionStrategy) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, options(), device);
  Result<DeviceInfo> info = device.info().wait();
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->kind, DeviceKind::cuda);
  EXPECT_EQ(info->completion, GetParam());
  EXPECT_GE(info->compute_capability, 70);
  EXPECT_NE(info->library("cuBLASLt"), nullptr);
  EXPECT_NE(info->library("cuDNN"), nullptr);
  EXPECT_GT(info->memory_capacity_bytes, 0u);
  // Asking opens nothing: a fresh device holds no family's state, so it reports no cache; a GEMM past the small
  // kernel's sizes opens cuBLASLt's.
  for (const CacheStats& cache : info->caches) ADD_FAILURE() << "a fresh device reports " << cache.name;
  constexpr std::int64_t kSize = 160;
  auto a = *device.ask(Allocate{.dtype = DType::f32, .count = kSize * kSize}).wait();
  auto b = *device.ask(Allocate{.dtype = DType::f32, .count = kSize * kSize}).wait();
  auto c = *device.ask(Allocate{.dtype = DType::f32, .count = kSize * kSize}).wait();
  ASSERT_THAT(device.gemm(Gemm{.shape = {.m = kSize, .n = kSize, .k = kSize}, .a = a, .b = b, .c = c}).wait(), IsOk());
  info = device.info().wait();
  ASSERT_THAT(info, IsOk());
  EXPECT_NE(info->cache("cublaslt-plans"), nullptr);
  EXPECT_EQ(info->cache("cudnn-plans"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Strategies, CudaDeviceTest,
                         ::testing::Values(CompletionStrategy::poller, CompletionStrategy::host_callback,
                                           CompletionStrategy::blocking),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace accel

// Recording on a CUDA device, on every way it runs requests (each completion strategy, and isolated): a recorded
// pipeline (Philox fill, GEMM, axpy, scal, r2c FFT) launched equals the same requests sent one by one on the same
// device exactly, and the CPU device's results within f32 rounding; launched many times with a buffer rebound
// between launches; a freed buffer fails the launch with stale_handle before any step runs. A launch is one CUDA
// graph captured once per recording and launched again ("recorded-graphs" cache), and its buffer check writes
// nothing (a version-keyed cache stays warm). Issue 47's pipeline with host copies (upload from pinned memory, FFT
// and inverse, GEMM, scal, download into pinned memory) launched 1,000 times with host memory and a buffer rebound
// between launches equals direct execution bit for bit; pageable host memory is refused by name, and an isolated
// device refuses host copies by name. A buffer moved by its first export is launched over its new memory. A Trsm by
// blocks (f32 and f64), recorded and launched with its right-hand sides rebound, equals the request sent directly, and
// so do 16-bit Dot and Asum, in one launch and in two. Skipped without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include "accel/device/process_sharing.hpp"
#include "accel/device/recording.hpp"
#include "accel/libs/blas/level1.hpp"
#include "accel/libs/blas/level3.hpp"
#include "device/host_copy_pipeline.hpp"
#include "device/recording_pipeline.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

namespace accel {
namespace {

using accel::testing::GpuTestTarget;
using accel::testing::HostCopyPipeline;
using accel::testing::IsOk;
using accel::testing::RecordingPipeline;
using accel::testing::StatusIs;

template <class T>
std::vector<T> download(const Device& device, const Buffer<T>& buffer) {
  std::vector<T> values(buffer.size());
  EXPECT_THAT(device.download(buffer, std::span<T>(values)).wait(), IsOk());
  return values;
}

// sqrt(Σ |got - want|²) / sqrt(Σ |want|²).
template <class T>
double relative_error(const std::vector<T>& got, const std::vector<T>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    diff += std::norm(std::complex<double>(got[i]) - std::complex<double>(want[i]));
    norm += std::norm(std::complex<double>(want[i]));
  }
  return std::sqrt(diff / std::max(norm, 1e-300));
}

// The device's "recorded-graphs" counters (its default stream's), reported once the stream has launched a
// recording (`used`): zeros before. An isolated device's reply may cut its list of caches to fit a slot: null
// then, and only then.
std::optional<CacheStats> recorded_graphs(const Device& device, const GpuTestTarget& target, bool used) {
  Result<DeviceInfo> info = device.info().wait();
  EXPECT_THAT(info, IsOk());
  if (!info.ok()) return std::nullopt;
  const CacheStats* stats = info->cache("recorded-graphs");
  if (target.isolation != Isolation::in_process) return stats ? std::optional<CacheStats>(*stats) : std::nullopt;
  if (!used) {
    EXPECT_EQ(stats, nullptr) << "an unused stream reports no recorded graphs";
    return CacheStats{};
  }
  EXPECT_NE(stats, nullptr);
  return stats ? std::optional<CacheStats>(*stats) : std::nullopt;
}

// Pinned host memory of `count` floats (cudaHostAlloc), freed when it goes.
class PinnedFloats {
 public:
  explicit PinnedFloats(std::size_t count) : count_(count) {
    void* data = nullptr;
    EXPECT_EQ(cudaHostAlloc(&data, count * sizeof(float), cudaHostAllocPortable), cudaSuccess);
    data_ = static_cast<float*>(data);
  }
  ~PinnedFloats() { (void)cudaFreeHost(data_); }
  PinnedFloats(const PinnedFloats&) = delete;
  PinnedFloats& operator=(const PinnedFloats&) = delete;
  [[nodiscard]] std::span<float> span() noexcept { return {data_, count_}; }
  [[nodiscard]] std::vector<float> values() const { return {data_, data_ + count_}; }

 private:
  std::size_t count_;
  float* data_ = nullptr;
};

class CudaRecordingTest : public ::testing::TestWithParam<GpuTestTarget> {
 protected:
  std::vector<float> random(std::size_t n) {
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return v;
  }

  System system_;
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_P(CudaRecordingTest, ALaunchEqualsTheRequestsOneByOneAndTheCpuDevice) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  Device cpu = *Device::open(system_, {.kind = DeviceKind::cpu});
  struct Shape {
    std::int64_t m, n, k;
  };
  for (const Shape& s : {Shape{3, 5, 4}, Shape{64, 64, 64}, Shape{7, 3, 9}, Shape{129, 96, 33}}) {
    SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k);
    const std::vector<float> b = random(s.k * s.n), d = random(s.m * s.n);
    Result<RecordingPipeline> direct = RecordingPipeline::make(gpu, s.m, s.n, s.k, b, d);
    Result<RecordingPipeline> replayed = RecordingPipeline::make(gpu, s.m, s.n, s.k, b, d);
    Result<RecordingPipeline> reference = RecordingPipeline::make(cpu, s.m, s.n, s.k, b, d);
    ASSERT_THAT(direct, IsOk());
    ASSERT_THAT(replayed, IsOk());
    ASSERT_THAT(reference, IsOk());
    Result<Recording> recording = replayed->record(gpu);
    ASSERT_THAT(recording, IsOk());
    for (int launch = 0; launch < 3; ++launch) {
      ASSERT_THAT(direct->run_one_by_one(gpu), IsOk());
      ASSERT_THAT(reference->run_one_by_one(cpu), IsOk());
      ASSERT_THAT(recording->launch().wait(), IsOk());
      EXPECT_EQ(download(gpu, replayed->d), download(gpu, direct->d));
      EXPECT_EQ(download(gpu, replayed->e), download(gpu, direct->e));
      EXPECT_LE(relative_error(download(gpu, replayed->c), download(cpu, reference->c)), 1e-5);
      EXPECT_LE(relative_error(download(gpu, replayed->d), download(cpu, reference->d)), 1e-5);
      EXPECT_LE(relative_error(download(gpu, replayed->e), download(cpu, reference->e)), 1e-5);
    }
  }
}

TEST_P(CudaRecordingTest, ManyLaunchesWithABufferReboundBetweenThemEqualDirectExecution) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  constexpr std::int64_t m = 16, n = 32, k = 8;
  const std::vector<float> b0 = random(k * n), b1 = random(k * n), d = random(m * n);
  Result<RecordingPipeline> direct = RecordingPipeline::make(gpu, m, n, k, b0, d);
  Result<RecordingPipeline> replayed = RecordingPipeline::make(gpu, m, n, k, b0, d);
  ASSERT_THAT(direct, IsOk());
  ASSERT_THAT(replayed, IsOk());
  Buffer<float> other_b = *gpu.allocate<float>(k * n).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(b1), other_b).wait(), IsOk());
  Buffer<float> direct_other_b = *gpu.allocate<float>(k * n).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(b1), direct_other_b).wait(), IsOk());
  Result<Recording> recording = replayed->record(gpu);
  ASSERT_THAT(recording, IsOk());
  RecordingPipeline direct_other = *direct;
  direct_other.b = direct_other_b;
  for (int launch = 0; launch < 200; ++launch) {
    const bool other = launch % 2 == 1;
    const BufferHandle wanted = other ? other_b.handle() : replayed->b.handle();
    if (recording->bound(replayed->b) != wanted) {
      ASSERT_THAT(recording->rebind(recording->bound(replayed->b), wanted), IsOk());
    }
    ASSERT_THAT((other ? direct_other : *direct).run_one_by_one(gpu), IsOk());
    ASSERT_THAT(recording->launch().wait(), IsOk());
  }
  EXPECT_EQ(download(gpu, replayed->d), download(gpu, direct->d));
  EXPECT_EQ(download(gpu, replayed->e), download(gpu, direct->e));
}

// A Trsm of order 549 runs by blocks (launches of kernels of ours between GEMMs, libs/blas; f32's diagonal blocks on
// the kernel whose shared memory its plan allows before the capture): recorded, it is captured as one graph, and each
// launch, its right-hand sides rebound between two buffers, equals the request sent directly on fresh values.
template <class T>
void expect_recorded_trsm_by_blocks_equals_direct(const Device& gpu, std::mt19937_64& rng) {
  constexpr std::int64_t order = 549, rhs = 300;
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<T> a(order * order);
  for (std::int64_t j = 0; j < order; ++j)  // well conditioned: a diagonal of 2 to 3, the rest at most 1 / order
    for (std::int64_t i = 0; i < order; ++i)
      a[static_cast<std::size_t>(i + j * order)] = static_cast<T>(i == j ? 2.5 + 0.5 * dist(rng) : dist(rng) / order);
  Buffer<T> a_buffer = *gpu.allocate<T>(order * order).wait();
  ASSERT_THAT(gpu.upload(std::span<const T>(a), a_buffer).wait(), IsOk());
  Buffer<T> recorded_b = *gpu.allocate<T>(order * rhs).wait();
  Buffer<T> other_b = *gpu.allocate<T>(order * rhs).wait();
  Buffer<T> direct_b = *gpu.allocate<T>(order * rhs).wait();
  const blas::Trsm request{.dtype = std::is_same_v<T, double> ? DType::f64 : DType::f32,
                           .m = order,
                           .n = rhs,
                           .alpha = 0.75,
                           .a = a_buffer.handle(),
                           .b = recorded_b.handle()};
  Recording recording(gpu);
  ASSERT_THAT(recording.record(request), IsOk());
  for (int launch = 0; launch < 4; ++launch) {
    const Buffer<T>& bound = launch % 2 == 0 ? recorded_b : other_b;
    if (recording.bound(recorded_b) != bound.handle()) {
      ASSERT_THAT(recording.rebind(recording.bound(recorded_b), bound.handle()), IsOk());
    }
    std::vector<T> b(static_cast<std::size_t>(order * rhs));
    for (T& x : b) x = static_cast<T>(dist(rng));
    ASSERT_THAT(gpu.upload(std::span<const T>(b), bound).wait(), IsOk());
    ASSERT_THAT(gpu.upload(std::span<const T>(b), direct_b).wait(), IsOk());
    ASSERT_THAT(recording.launch().wait(), IsOk());
    blas::Trsm direct = request;
    direct.b = direct_b.handle();
    ASSERT_THAT(gpu.ask(direct).wait(), IsOk());
    constexpr double kTolerance = std::is_same_v<T, double> ? 1e-14 : 1e-6;
    EXPECT_LE(relative_error(download(gpu, bound), download(gpu, direct_b)), kTolerance) << "launch " << launch;
  }
}

TEST_P(CudaRecordingTest, ATrsmByBlocksLaunchedWithItsRightHandSidesReboundEqualsTheRequestSentDirectly) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  expect_recorded_trsm_by_blocks_equals_direct<float>(gpu, rng_);
  expect_recorded_trsm_by_blocks_equals_direct<double>(gpu, rng_);
}

// 16-bit Dot and Asum run on a kernel of ours (libs/blas): one launch up to 65,536 elements, beyond that blocks whose
// sums go to the plan's workspace and a second launch that adds them. Recorded, each launch on fresh values gives the
// results of the requests sent directly, to the bit: the kernels add in a fixed order.
template <class T>
void expect_recorded_16_bit_sums_equal_direct(const Device& gpu, std::mt19937_64& rng, std::int64_t n) {
  SCOPED_TRACE(::testing::Message() << to_string(dtype_of<T>()) << " n=" << n);
  std::uniform_real_distribution<float> dist(-1, 1);
  const auto element = [&] {  // at most 1/64: Asum of 2^20 stays far below f16's largest
    const float value = dist(rng) / 64;
    if constexpr (std::is_same_v<T, Half>)
      return to_half(value);
    else
      return to_bfloat16(value);
  };
  const auto bits = [&](const Buffer<T>& result) { return download(gpu, result).at(0).bits; };
  const DType dtype = dtype_of<T>();
  const Buffer<T> x = *gpu.allocate<T>(n).wait(), y = *gpu.allocate<T>(n).wait();
  const Buffer<T> dot = *gpu.allocate<T>(1).wait(), asum = *gpu.allocate<T>(1).wait();
  const Buffer<T> direct_dot = *gpu.allocate<T>(1).wait(), direct_asum = *gpu.allocate<T>(1).wait();
  const blas::Dot dot_request{.dtype = dtype, .n = n, .x = x.handle(), .y = y.handle(), .result = dot.handle()};
  const blas::Asum asum_request{.dtype = dtype, .n = n, .x = x.handle(), .result = asum.handle()};
  Recording recording(gpu);
  ASSERT_THAT(recording.record(dot_request), IsOk());
  ASSERT_THAT(recording.record(asum_request), IsOk());
  for (int launch = 0; launch < 3; ++launch) {
    std::vector<T> xs(static_cast<std::size_t>(n)), ys(static_cast<std::size_t>(n));
    std::generate(xs.begin(), xs.end(), element);
    std::generate(ys.begin(), ys.end(), element);
    ASSERT_THAT(gpu.upload(std::span<const T>(xs), x).wait(), IsOk());
    ASSERT_THAT(gpu.upload(std::span<const T>(ys), y).wait(), IsOk());
    ASSERT_THAT(recording.launch().wait(), IsOk());
    blas::Dot direct_dot_request = dot_request;
    direct_dot_request.result = direct_dot.handle();
    blas::Asum direct_asum_request = asum_request;
    direct_asum_request.result = direct_asum.handle();
    ASSERT_THAT(gpu.ask(direct_dot_request).wait(), IsOk());
    ASSERT_THAT(gpu.ask(direct_asum_request).wait(), IsOk());
    EXPECT_EQ(bits(dot), bits(direct_dot)) << "launch " << launch;
    EXPECT_EQ(bits(asum), bits(direct_asum)) << "launch " << launch;
    EXPECT_NE(bits(asum), 0) << "launch " << launch;
  }
}

TEST_P(CudaRecordingTest, SixteenBitDotAndAsumRecordedEqualTheRequestsSentDirectly) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  for (const std::int64_t n : {std::int64_t{65536}, std::int64_t{1} << 20}) {
    expect_recorded_16_bit_sums_equal_direct<Half>(gpu, rng_, n);
    expect_recorded_16_bit_sums_equal_direct<BFloat16>(gpu, rng_, n);
  }
}

TEST_P(CudaRecordingTest, AFreedBufferFailsTheLaunchBeforeAnyStepRuns) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  const std::vector<float> y0 = random(64);
  Buffer<float> x = *gpu.allocate<float>(64).wait(), y = *gpu.allocate<float>(64).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(y0), y).wait(), IsOk());
  Recording recording(gpu);
  ASSERT_THAT(recording.record(blas::Scal{.n = 64, .alpha = 2.0, .x = y}), IsOk());
  ASSERT_THAT(recording.record(blas::Axpy{.n = 64, .x = x, .y = y}), IsOk());
  ASSERT_THAT(gpu.free(x).wait(), IsOk());
  EXPECT_THAT(recording.launch().wait(), StatusIs(Code::stale_handle, "step 1 (blas::Axpy)"));
  EXPECT_EQ(download(gpu, y), y0);
}

// A kept graph's launch resolves no handle while no buffer was removed or moved since its last check
// (BufferTable::layout); a buffer freed after launches, its slot and memory likely taken by a new one, must still fail.
TEST_P(CudaRecordingTest, ABufferFreedAfterLaunchesFailsTheNextEvenWhereANewOneTakesItsPlace) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  const std::vector<float> x0 = random(64), y0 = random(64);
  Buffer<float> x = *gpu.allocate<float>(64).wait(), y = *gpu.allocate<float>(64).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(x0), x).wait(), IsOk());
  ASSERT_THAT(gpu.upload(std::span<const float>(y0), y).wait(), IsOk());
  Recording recording(gpu);
  ASSERT_THAT(recording.record(blas::Scal{.n = 64, .alpha = 0.5, .x = y}), IsOk());
  ASSERT_THAT(recording.record(blas::Axpy{.n = 64, .x = x, .y = y}), IsOk());
  for (int launch = 0; launch < 3; ++launch) ASSERT_THAT(recording.launch().wait(), IsOk());
  const std::vector<float> launched = download(gpu, y);
  ASSERT_THAT(gpu.free(x).wait(), IsOk());
  Buffer<float> taking_its_place = *gpu.allocate<float>(64).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(x0), taking_its_place).wait(), IsOk());
  EXPECT_THAT(recording.launch().wait(), StatusIs(Code::stale_handle, "step 1 (blas::Axpy)"));
  EXPECT_EQ(download(gpu, y), launched);
  // Bound to the new buffer, it runs again.
  ASSERT_THAT(recording.rebind(x, taking_its_place), IsOk());
  EXPECT_THAT(recording.launch().wait(), IsOk());
}

TEST_P(CudaRecordingTest, ALaunchIsOneCapturedGraphLaunchedAgainUntilABufferIsRebound) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  constexpr std::int64_t m = 32, n = 16, k = 8;
  const std::vector<float> b = random(k * n), d = random(m * n);
  Result<RecordingPipeline> direct = RecordingPipeline::make(gpu, m, n, k, b, d);
  Result<RecordingPipeline> replayed = RecordingPipeline::make(gpu, m, n, k, b, d);
  ASSERT_THAT(direct, IsOk());
  ASSERT_THAT(replayed, IsOk());
  Result<Recording> recording = replayed->record(gpu);
  ASSERT_THAT(recording, IsOk());
  const std::optional<CacheStats> before = recorded_graphs(gpu, GetParam(), false);
  for (int launch = 0; launch < 5; ++launch) {
    ASSERT_THAT(direct->run_one_by_one(gpu), IsOk());
    ASSERT_THAT(recording->launch().wait(), IsOk());
  }
  EXPECT_EQ(download(gpu, replayed->d), download(gpu, direct->d));  // bit for bit
  EXPECT_EQ(download(gpu, replayed->e), download(gpu, direct->e));
  const std::optional<CacheStats> launched = recorded_graphs(gpu, GetParam(), true);
  if (before && launched) {
    EXPECT_EQ(launched->builds - before->builds, 1u);  // captured once
    EXPECT_EQ(launched->hits - before->hits, 4u);      // then launched as it was
    EXPECT_EQ(launched->build_failures, before->build_failures);
    EXPECT_GE(launched->entries, 1u);
  }
  // Another B: captured again (the kept graph updated in place or replaced), then launched again as it is.
  Buffer<float> other_b = *gpu.allocate<float>(k * n).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(b), other_b).wait(), IsOk());
  ASSERT_THAT(recording->rebind(replayed->b, other_b), IsOk());
  for (int launch = 0; launch < 2; ++launch) {
    ASSERT_THAT(direct->run_one_by_one(gpu), IsOk());
    ASSERT_THAT(recording->launch().wait(), IsOk());
  }
  // Equal to rounding, not bit for bit: by now the product's plan has run kRunsBeforeTiming times and was timed, so
  // the direct GEMM may take another algorithm than the one captured (1-ulp differences on the H200, every target).
  EXPECT_LT(relative_error(download(gpu, replayed->d), download(gpu, direct->d)), 1e-6);
  EXPECT_LT(relative_error(download(gpu, replayed->e), download(gpu, direct->e)), 1e-6);
  const std::optional<CacheStats> rebound = recorded_graphs(gpu, GetParam(), true);
  if (launched && rebound) {
    EXPECT_EQ(rebound->builds - launched->builds, 1u);
    EXPECT_EQ(rebound->hits - launched->hits, 1u);
  }
  // Freed: refused before anything runs, and nothing captured.
  ASSERT_THAT(gpu.free(other_b).wait(), IsOk());
  const std::vector<float> d_before = download(gpu, replayed->d);
  EXPECT_THAT(recording->launch().wait(), StatusIs(Code::stale_handle, "step 1 (Gemm)"));
  EXPECT_EQ(download(gpu, replayed->d), d_before);
  const std::optional<CacheStats> refused = recorded_graphs(gpu, GetParam(), true);
  if (rebound && refused) {
    EXPECT_EQ(refused->builds, rebound->builds);
  }
}

TEST_P(CudaRecordingTest, ALaunchAfterItsBufferMovedToExportedMemoryScalesTheNewMemory) {
  // A buffer's first export moves it into memory of its own (process_sharing.hpp): the same handle at another
  // address. The graph kept for the old address must not be launched as it is: the launch sees the new address and
  // captures again.
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  const std::vector<float> y0 = random(64);
  Buffer<float> y = *gpu.allocate<float>(64).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(y0), y).wait(), IsOk());
  Recording recording(gpu);
  ASSERT_THAT(recording.record(blas::Scal{.n = 64, .alpha = 2.0, .x = y}), IsOk());
  ASSERT_THAT(recording.launch().wait(), IsOk());
  ASSERT_THAT(recording.launch().wait(), IsOk());  // the kept graph, its buffers as last checked
  const std::optional<CacheStats> before = recorded_graphs(gpu, GetParam(), true);
  ASSERT_THAT(gpu.export_buffer(y).wait(), IsOk());
  ASSERT_THAT(recording.launch().wait(), IsOk());
  ASSERT_THAT(recording.launch().wait(), IsOk());
  std::vector<float> want = y0;
  for (float& value : want) value *= 16;  // four launches, each doubling: exact in f32
  EXPECT_EQ(download(gpu, y), want);
  const std::optional<CacheStats> after = recorded_graphs(gpu, GetParam(), true);
  if (before && after) {
    EXPECT_EQ(after->builds - before->builds, 1u);  // captured again over the new memory, once
    EXPECT_EQ(after->hits - before->hits, 1u);
  }
}

TEST_P(CudaRecordingTest, HostCopiesLaunchedAThousandTimesWithRebindingEqualDirectExecution) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  constexpr std::int64_t m = 48, n = 64;
  const std::vector<float> b0 = random(n * n), b1 = random(n * n);
  Result<HostCopyPipeline> direct = HostCopyPipeline::make(gpu, m, n, b0);
  Result<HostCopyPipeline> replayed = HostCopyPipeline::make(gpu, m, n, b0);
  ASSERT_THAT(direct, IsOk());
  ASSERT_THAT(replayed, IsOk());
  Buffer<float> other_b = *gpu.allocate<float>(n * n).wait(), direct_other_b = *gpu.allocate<float>(n * n).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(b1), other_b).wait(), IsOk());
  ASSERT_THAT(gpu.upload(std::span<const float>(b1), direct_other_b).wait(), IsOk());
  HostCopyPipeline direct_other = *direct;
  direct_other.b = direct_other_b;
  PinnedFloats in0(m * n), in1(m * n), out0(m * n), out1(m * n);
  PinnedFloats* ins[] = {&in0, &in1};
  PinnedFloats* outs[] = {&out0, &out1};
  std::vector<float> want(m * n);
  Result<Recording> recording = replayed->record(gpu, in0.span(), out0.span());
  ASSERT_THAT(recording, IsOk());
  if (GetParam().isolation != Isolation::in_process) {
    EXPECT_THAT(recording->launch().wait(),
                StatusIs(Code::not_supported, "step 0 (CopyToDevice): an isolated device cannot record host copies"));
    return;
  }
  Device cpu = *Device::open(system_, {.kind = DeviceKind::cpu});
  Result<HostCopyPipeline> reference = HostCopyPipeline::make(cpu, m, n, b0);
  ASSERT_THAT(reference, IsOk());
  for (int launch = 0; launch < 1000; ++launch) {
    const std::size_t now = launch % 2;
    const bool other_b_now = launch % 3 == 1;
    if (launch > 0) {  // the other host memory every launch, the other B every third: never recorded again
      const std::size_t before = 1 - now;
      ASSERT_THAT(recording->rebind(HostSource::of(std::span<const float>(ins[before]->span())),
                                    HostSource::of(std::span<const float>(ins[now]->span()))),
                  IsOk());
      ASSERT_THAT(recording->rebind(HostDestination::of(outs[before]->span()), HostDestination::of(outs[now]->span())),
                  IsOk());
      const BufferHandle b = other_b_now ? other_b.handle() : replayed->b.handle();
      if (recording->bound(replayed->b) != b) {
        ASSERT_THAT(recording->rebind(recording->bound(replayed->b), b), IsOk());
      }
    }
    const std::vector<float> x = random(m * n);
    std::copy(x.begin(), x.end(), ins[now]->span().begin());
    ASSERT_THAT((other_b_now ? direct_other : *direct).run_one_by_one(gpu, x, want), IsOk());
    ASSERT_THAT(recording->launch().wait(), IsOk()) << "launch " << launch;
    ASSERT_EQ(outs[now]->values(), want) << "launch " << launch;  // bit for bit
    if (launch == 0) {
      std::vector<float> on_cpu(m * n);
      ASSERT_THAT(reference->run_one_by_one(cpu, x, on_cpu), IsOk());
      EXPECT_LE(relative_error(outs[now]->values(), on_cpu), 1e-5);
    }
  }
  const std::optional<CacheStats> stats = recorded_graphs(gpu, GetParam(), true);
  if (stats) {
    EXPECT_EQ(stats->build_failures, 0u);
  }
}

TEST_P(CudaRecordingTest, PageableHostMemoryIsRefusedByNameBeforeAnythingRuns) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, GetParam().options(), gpu);
  const std::vector<float> y0 = random(64);
  Buffer<float> y = *gpu.allocate<float>(64).wait();
  ASSERT_THAT(gpu.upload(std::span<const float>(y0), y).wait(), IsOk());
  std::vector<float> pageable(64, -1.0f);
  Recording recording(gpu);
  ASSERT_THAT(recording.record(blas::Scal{.n = 64, .alpha = 2.0, .x = y}), IsOk());
  ASSERT_THAT(recording.record(CopyToHost{.source = y, .destination = HostDestination::of(std::span<float>(pageable))}),
              IsOk());
  const char* why = GetParam().isolation == Isolation::in_process
                        ? "step 1 (CopyToHost): CopyToHost: the host destination is pageable host memory"
                        : "step 1 (CopyToHost): an isolated device cannot record host copies";
  EXPECT_THAT(recording.launch().wait(), StatusIs(Code::not_supported, why));
  EXPECT_EQ(pageable, std::vector<float>(64, -1.0f));
  if (GetParam().isolation == Isolation::in_process) {  // the scal ran: a refused step is left out, as on the CPU
    std::vector<float> want = y0;
    for (float& v : want) v *= 2;
    EXPECT_EQ(download(gpu, y), want);
  } else {
    EXPECT_EQ(download(gpu, y), y0);  // refused whole before it crossed
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, CudaRecordingTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel

// Recording on a CUDA device, on every way it runs requests (each completion strategy, and isolated): a recorded
// pipeline (Philox fill, GEMM, axpy, scal, r2c FFT) launched equals the same requests sent one by one on the same
// device exactly, and the CPU device's results within f32 rounding; launched many times with a buffer rebound
// between launches; a freed buffer fails the launch with stale_handle before any step runs. A launch is one CUDA
// graph captured once per recording and launched again ("recorded-graphs" cache), and its buffer check writes
// nothing (a version-keyed cache stays warm); a buffer freed after launches fails the next even where a new one takes
// its place. A buffer moved by its first export is launched over its new memory. A Trsm by
// blocks (f32 and f64), recorded and launched with its right-hand sides rebound, equals the request sent directly, and
// so do 16-bit Dot and Asum, in one launch and in two. Recordings with host copies: cuda_recording_host_copies_test.
// Skipped without a GPU.
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
#include "device/cuda_recording_fixture.hpp"
#include "device/recording_pipeline.hpp"

namespace accel {
namespace {

using accel::testing::download;
using accel::testing::IsOk;
using accel::testing::recorded_graphs;
using accel::testing::RecordingPipeline;
using accel::testing::relative_error;
using accel::testing::StatusIs;

class CudaRecordingTest : public accel::testing::CudaRecordingFixture {};

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

INSTANTIATE_TEST_SUITE_P(EveryTarget, CudaRecordingTest, ::testing::ValuesIn(accel::testing::kEveryGpuTarget),
                         accel::testing::target_name);

}  // namespace
}  // namespace accel

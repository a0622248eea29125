// cuFFT's executions replayed as CUDA graphs (src/libs/fft/captured_executions.hpp): which executions are captured,
// replayed and evicted, as the stream's "cufft-graphs" counts them, and every result against FFTW on the CPU device.
// Skipped without a GPU.
#include <gtest/gtest.h>

#include <complex>
#include <random>
#include <span>
#include <tuple>
#include <vector>

#include "libs/fft/fft_testing.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/test_seed.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::fft::Complex;
using testing::fft::relative_error;
using testing::fft::run_fft;

// A transform repeated over the same buffers is captured as a CUDA graph on its fourth run among the last four plain
// ones, and replayed from then on (captured_executions.hpp), reading each round's new input: every result
// against the CPU. The direction is part of what a graph captured; new buffers each time are never captured; a
// ping-pong between two buffers is; a fifth graph evicts the least recently launched.
TEST(CudaFftGraphTest, RepeatedTransformsOverTheSameBuffersReplayACapturedGraph) {
  System system;
  ACCEL_OPEN_CUDA_OR_SKIP(system, {.kind = DeviceKind::cuda}, device);
  Device cpu = *Device::open(system, {.kind = DeviceKind::cpu});
  std::mt19937_64 rng{accel::testing::test_seed()};
  const FftShape forward{.n = {256}, .batch = 64};
  FftShape inverse = forward;
  inverse.direction = FftDirection::inverse;
  const auto count = static_cast<std::uint64_t>(256 * 64);
  auto allocate = [&] { return *device.ask(Allocate{.dtype = DType::c64, .count = count}).wait(); };
  const BufferHandle a = allocate(), b = allocate(), c = allocate();
  // Plain executions, captures, launches of a graph, evictions.
  using Counts = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>;
  auto graphs = [&] {
    const Result<DeviceInfo> info = device.info().wait();
    const CacheStats* stats = info.ok() ? info->cache("cufft-graphs") : nullptr;
    EXPECT_NE(stats, nullptr);
    return stats != nullptr ? Counts(stats->misses, stats->builds, stats->hits, stats->evictions) : Counts();
  };
  auto transform_matches = [&](const FftShape& shape, const BufferHandle& in, const BufferHandle& out) {
    std::uniform_real_distribution<float> uniform(-1, 1);
    std::vector<std::complex<float>> input(count), output(count);
    for (std::complex<float>& v : input) v = {uniform(rng), uniform(rng)};
    ASSERT_THAT(
        device
            .ask(CopyToDevice{.source = HostSource::of(std::span<const std::complex<float>>(input)), .destination = in})
            .wait(),
        IsOk());
    ASSERT_THAT(device.ask(Fft{.shape = shape, .input = in, .output = out}).wait(), IsOk());
    ASSERT_THAT(
        device
            .ask(CopyToHost{.source = out, .destination = HostDestination::of(std::span<std::complex<float>>(output))})
            .wait(),
        IsOk());
    Result<testing::fft::Ran> on_cpu =
        run_fft(cpu, shape, false, std::vector<Complex>(input.begin(), input.end()), rng);
    ASSERT_THAT(on_cpu, IsOk());
    EXPECT_LE(relative_error(std::vector<Complex>(output.begin(), output.end()), on_cpu->output), 1e-5);
  };
  for (int round = 0; round < 6; ++round) transform_matches(forward, a, b);
  EXPECT_EQ(graphs(), Counts(3, 1, 3, 0));
  for (int round = 0; round < 4; ++round) transform_matches(inverse, a, b);
  transform_matches(forward, a, b);
  EXPECT_EQ(graphs(), Counts(6, 2, 5, 0));
  for (int round = 0; round < 3; ++round) {
    const BufferHandle fresh = allocate();
    ASSERT_THAT(device.ask(Fft{.shape = forward, .input = round % 2 == 0 ? a : b, .output = fresh}).wait(), IsOk());
  }
  EXPECT_EQ(graphs(), Counts(9, 2, 5, 0));
  for (int round = 0; round < 9; ++round) {
    if (round % 2 == 0) {
      transform_matches(forward, a, c);
    } else {
      transform_matches(forward, c, a);
    }
  }
  EXPECT_EQ(graphs(), Counts(15, 4, 8, 0));
  // A fifth graph: the inverse's, launched longest ago, goes.
  for (int round = 0; round < 4; ++round) transform_matches(forward, b, c);
  EXPECT_EQ(graphs(), Counts(18, 5, 9, 1));
  transform_matches(inverse, a, b);
  EXPECT_EQ(graphs(), Counts(19, 5, 9, 1));
}

}  // namespace
}  // namespace accel

// cuFFT on the GPU against FFTW on the CPU device, on fresh random inputs, over a sweep of shapes: 1-D sizes from 1
// to 4096 (odd, prime, powers of two and of three), 2-D and 3-D, batched, advanced layouts, in place, every type,
// every precision (f16 on power-of-two sizes) and every normalisation; the same on an isolated device; the plan
// cache. Each comparison prints its relative error and bound. Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <optional>
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
using testing::StatusIs;
using testing::fft::Complex;
using testing::fft::relative_error;
using testing::fft::run_fft;

// FFTW and cuFFT each err by about epsilon * sqrt(log N) (measured well under 1e-6 and 1e-14); the bounds leave
// room for the largest sizes here. In f16 the CPU device's result is the f32 one rounded (2^-11 per part at most),
// while cuFFT computes in half (fft.hpp): a rounding of up to 2^-11 at each of its log2 N stages, so the bound is
// 2^-11 * (log2 N + 1) relative to the output's norm (6.3e-3 for N = 4096, 7.3e-3 for 64 x 128).
double bound(const FftGeometry& g) {
  switch (g.real_type) {
    case DType::f64: return 1e-12;
    case DType::f16: return std::ldexp(1.0, -11) * static_cast<double>(std::bit_width(g.transform_size));  // log2 N + 1
    default: return 1e-5;
  }
}

class CudaFftTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, {.kind = DeviceKind::cuda}, device);
    gpu_ = device;
  }

  // A random dense input for `g`; for c2r the half spectrum of a random real array (made by the CPU device's r2c),
  // so that it is Hermitian as c2r assumes.
  std::vector<Complex> random_input(const FftGeometry& g) {
    std::uniform_real_distribution<double> uniform(-1, 1);
    const FftShape& s = g.shape;
    if (s.type == FftType::c2r) {
      const FftShape r2c{.type = FftType::r2c, .precision = s.precision, .rank = s.rank, .n = s.n, .batch = s.batch};
      std::vector<Complex> real(s.batch * g.transform_size);
      for (Complex& v : real) v = uniform(rng_);
      Result<testing::fft::Ran> half = run_fft(cpu_, r2c, false, real, rng_);
      EXPECT_THAT(half, IsOk());
      return half.ok() ? half->output : std::vector<Complex>();
    }
    std::vector<Complex> input(s.batch * testing::fft::product(g.input_sizes));
    for (Complex& v : input)
      v = s.type == FftType::r2c ? Complex(uniform(rng_), 0) : Complex(uniform(rng_), uniform(rng_));
    return input;
  }

  // Runs `shape` on `device` and on the CPU device with the same input; their relative difference must be within
  // the precision's bound, and the GPU must write nothing outside the output layout.
  void compare(Device& device, const FftShape& shape, bool in_place, bool real_buffer = false) {
    const std::string name =
        to_string(shape) + (in_place ? (real_buffer ? " in place (real buffer)" : " in place") : "");
    SCOPED_TRACE(name);
    Result<FftGeometry> g = plan_fft_geometry(shape, in_place);
    ASSERT_THAT(g, IsOk());
    const std::vector<Complex> input = random_input(*g);
    ASSERT_FALSE(input.empty());
    Result<testing::fft::Ran> on_gpu = run_fft(device, shape, in_place, input, rng_, real_buffer);
    Result<testing::fft::Ran> on_cpu = run_fft(cpu_, shape, in_place, input, rng_, real_buffer);
    ASSERT_THAT(on_gpu, IsOk());
    ASSERT_THAT(on_cpu, IsOk());
    const double error = relative_error(on_gpu->output, on_cpu->output);
    fmt::print("{:<9.2e} (bound {:.1e})  {}\n", error, bound(*g), name);
    EXPECT_LE(error, bound(*g));
    EXPECT_TRUE(on_gpu->gaps_kept) << "the GPU wrote outside the output layout";
  }

  // Every type and direction of `n` in each precision, the normalisation cycling.
  void sweep(Device& device, int rank, std::array<std::int64_t, 3> n, std::int64_t batch,
             std::initializer_list<DType> precisions = {DType::f32, DType::f64}) {
    for (DType precision : precisions)
      for (const auto& [type, direction] :
           {std::pair{FftType::c2c, FftDirection::forward}, std::pair{FftType::c2c, FftDirection::inverse},
            std::pair{FftType::r2c, FftDirection::forward}, std::pair{FftType::c2r, FftDirection::inverse}}) {
        const auto normalization = static_cast<FftNormalization>(cases_++ % 3);
        compare(device,
                {.type = type,
                 .precision = precision,
                 .rank = rank,
                 .n = n,
                 .batch = batch,
                 .direction = direction,
                 .normalization = normalization},
                false);
        if (HasFatalFailure()) return;
      }
  }

  // An in-place r2c or c2r of `n`, inverse-normalised, batch 2: with the complex buffer, then with the real one.
  void compare_real_in_place(Device& device, FftType type, DType precision, int rank, std::array<std::int64_t, 3> n) {
    const FftShape shape{.type = type,
                         .precision = precision,
                         .rank = rank,
                         .n = n,
                         .batch = 2,
                         .direction = type == FftType::c2r ? FftDirection::inverse : FftDirection::forward,
                         .normalization = FftNormalization::inverse};
    compare(device, shape, true);
    compare(device, shape, true, /*real_buffer=*/true);
  }

  System system_;
  std::optional<Device> gpu_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::mt19937_64 rng_{accel::testing::test_seed()};
  int cases_ = 0;
};

TEST_F(CudaFftTest, OneDimensionalSizesFromOneTo4096) {
  for (std::int64_t n : {1,   2,   3,   4,   5,   7,   8,   11,  13,  16,   17,   27,   31,   32,   60,   64,   97,
                         100, 127, 128, 243, 256, 257, 500, 512, 625, 1000, 1009, 1024, 2048, 2187, 3001, 4093, 4096}) {
    sweep(*gpu_, 1, {n}, 3);
    if (HasFatalFailure()) return;
  }
}

TEST_F(CudaFftTest, TwoAndThreeDimensionalShapes) {
  for (const auto& n : std::initializer_list<std::array<std::int64_t, 3>>{
           {1, 16}, {17, 31}, {32, 32}, {64, 128}, {100, 81}, {256, 256}, {1024, 1024}}) {
    sweep(*gpu_, 2, n, 2);
    if (HasFatalFailure()) return;
  }
  for (const auto& n : std::initializer_list<std::array<std::int64_t, 3>>{
           {8, 8, 8}, {5, 7, 9}, {16, 32, 8}, {3, 1, 11}, {32, 32, 32}, {64, 64, 64}, {128, 128, 128}}) {
    sweep(*gpu_, 3, n, n[0] >= 64 ? 1 : 2);
    if (HasFatalFailure()) return;
  }
}

TEST_F(CudaFftTest, BatchedAdvancedLayouts) {
  Device& gpu = *gpu_;
  for (DType precision : {DType::f32, DType::f64}) {
    // Many small transforms (where per-call overhead shows), interleaved: element x of transform b at x * 64 + b.
    compare(gpu,
            {.precision = precision,
             .n = {1000},
             .batch = 64,
             .input = {.stride = 64, .distance = 1},
             .output = {.stride = 64, .distance = 1}},
            false);
    compare(gpu,
            {.precision = precision,
             .rank = 2,
             .n = {45, 60},
             .batch = 5,
             .direction = FftDirection::inverse,
             .normalization = FftNormalization::inverse,
             .input = {.embed = {48, 64}, .stride = 1, .distance = 3100},
             .output = {.embed = {45, 61}, .stride = 2, .distance = 5500}},
            false);
    compare(gpu,
            {.type = FftType::r2c,
             .precision = precision,
             .rank = 3,
             .n = {12, 10, 15},
             .batch = 3,
             .normalization = FftNormalization::orthonormal,
             .input = {.embed = {12, 11, 16}, .stride = 1, .distance = 2200},
             .output = {.embed = {12, 10, 9}, .stride = 2}},
            false);
    compare(gpu,
            {.type = FftType::c2r,
             .precision = precision,
             .rank = 2,
             .n = {33, 64},
             .batch = 4,
             .direction = FftDirection::inverse,
             .input = {.embed = {34, 40}, .stride = 1, .distance = 1400},
             .output = {.stride = 3}},
            false);
    compare(gpu, {.type = FftType::r2c, .precision = precision, .n = {256}, .batch = 4096}, false);
    if (HasFatalFailure()) return;
  }
}

TEST_F(CudaFftTest, InPlaceTransforms) {
  Device& gpu = *gpu_;
  for (DType precision : {DType::f32, DType::f64}) {
    compare(gpu, {.precision = precision, .n = {4096}, .batch = 8}, true);
    compare(gpu,
            {.precision = precision,
             .rank = 2,
             .n = {30, 50},
             .batch = 3,
             .direction = FftDirection::inverse,
             .input = {.embed = {32, 52}, .stride = 1, .distance = 1700}},
            true);
    for (FftType type : {FftType::r2c, FftType::c2r})
      for (const auto& [rank, n] :
           {std::pair{1, std::array<std::int64_t, 3>{1023}}, std::pair{1, std::array<std::int64_t, 3>{4096}},
            std::pair{2, std::array<std::int64_t, 3>{64, 33}}, std::pair{3, std::array<std::int64_t, 3>{16, 9, 20}}}) {
        compare_real_in_place(gpu, type, precision, rank, n);
        if (HasFatalFailure()) return;
      }
  }
}

// cuFFT's half precision (cufftXtMakePlanMany, CUDA_C_16F) against the CPU device's f32-and-round: c2c both ways,
// r2c and c2r, 1-D and 2-D, batched, out of place and in place.
TEST_F(CudaFftTest, HalfPrecisionMatchesTheCpu) {
  Device& gpu = *gpu_;
  for (const auto& [n, batch] :
       {std::pair{std::int64_t{64}, std::int64_t{3}}, std::pair{std::int64_t{1024}, std::int64_t{3}},
        std::pair{std::int64_t{4096}, std::int64_t{8}}}) {
    sweep(gpu, 1, {n}, batch, {DType::f16});
    if (HasFatalFailure()) return;
  }
  sweep(gpu, 2, {64, 128}, 2, {DType::f16});
  compare(gpu, {.precision = DType::f16, .n = {4096}, .batch = 8, .normalization = FftNormalization::orthonormal},
          true);
  for (FftType type : {FftType::r2c, FftType::c2r}) {
    compare_real_in_place(gpu, type, DType::f16, 2, {64, 128});
    if (HasFatalFailure()) return;
  }
}

TEST_F(CudaFftTest, HalfPrecisionOnAnIsolatedDevice) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, (DeviceOptions{.kind = DeviceKind::cuda, .isolation = Isolation::worker_process}),
                          isolated);
  sweep(isolated, 1, {1024}, 4, {DType::f16});
  sweep(isolated, 2, {64, 128}, 2, {DType::f16});
  // Refused before any launch, on this device as on every other: cuFFT's half transforms take powers of two only.
  const BufferHandle buffer = *isolated.ask(Allocate{.dtype = DType::c32, .count = 1024}).wait();
  EXPECT_THAT(
      isolated.ask(Fft{.shape = {.precision = DType::f16, .n = {1000}}, .input = buffer, .output = buffer}).wait(),
      StatusIs(Code::not_supported, "n[0] = 1000 is not one: pad to 1024 or use f32"));
}

TEST_F(CudaFftTest, ForwardThenInverseReturnsTheInputOnTheGpu) {
  Device& gpu = *gpu_;
  const FftShape forward{.rank = 2, .n = {96, 80}, .batch = 4, .normalization = FftNormalization::inverse};
  Result<FftGeometry> g = plan_fft_geometry(forward, false);
  ASSERT_THAT(g, IsOk());
  const std::vector<Complex> input = random_input(*g);
  Result<testing::fft::Ran> spectrum = run_fft(gpu, forward, false, input, rng_);
  ASSERT_THAT(spectrum, IsOk());
  FftShape inverse = forward;
  inverse.direction = FftDirection::inverse;
  Result<testing::fft::Ran> back = run_fft(gpu, inverse, true, spectrum->output, rng_);
  ASSERT_THAT(back, IsOk());
  const double error = relative_error(back->output, input);
  fmt::print("round trip c2c 96x80 x4 f32: relative error {:.2e}\n", error);
  EXPECT_LE(error, 1e-6);
}

TEST_F(CudaFftTest, AnIsolatedDeviceMatchesTheCpu) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, (DeviceOptions{.kind = DeviceKind::cuda, .isolation = Isolation::worker_process}),
                          isolated);
  compare(isolated, {.rank = 2, .n = {64, 48}, .batch = 3, .normalization = FftNormalization::orthonormal}, false);
  compare(isolated, {.type = FftType::r2c, .precision = DType::f64, .n = {1001}, .batch = 5}, true);
  compare(isolated,
          {.type = FftType::c2r,
           .rank = 3,
           .n = {8, 12, 10},
           .direction = FftDirection::inverse,
           .normalization = FftNormalization::inverse},
          false);
  // A refused request crosses back as the same named error.
  const BufferHandle buffer = *isolated.ask(Allocate{.dtype = DType::c64, .count = 64}).wait();
  EXPECT_THAT(
      isolated
          .ask(Fft{
              .shape = {.type = FftType::r2c, .n = {7}, .input = {.embed = {7}}}, .input = buffer, .output = buffer})
          .wait(),
      StatusIs(Code::invalid_argument, "padded"));
}

TEST_F(CudaFftTest, RepeatedRequestsHitThePlanCache) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, {.kind = DeviceKind::cuda}, device);  // its own streams: counts from zero
  const BufferHandle a = *device.ask(Allocate{.dtype = DType::c64, .count = 1 << 16}).wait();
  const BufferHandle b = *device.ask(Allocate{.dtype = DType::c64, .count = 1 << 16}).wait();
  auto plans = [&] {
    const Result<DeviceInfo> info = device.info().wait();
    const CacheStats* stats = info.ok() ? info->cache("cufft-plans") : nullptr;
    EXPECT_NE(stats, nullptr);
    return stats != nullptr ? *stats : CacheStats{};
  };
  const Fft fft{.shape = {.n = {4096}, .batch = 16}, .input = a, .output = b};
  for (int i = 0; i < 3; ++i) ASSERT_THAT(device.ask(fft).wait(), IsOk());
  EXPECT_EQ(plans().misses, 1u);
  EXPECT_EQ(plans().hits, 2u);
  // Direction and normalisation are not part of a cuFFT plan.
  Fft inverse = fft;
  inverse.shape.direction = FftDirection::inverse;
  inverse.shape.normalization = FftNormalization::inverse;
  ASSERT_THAT(device.ask(inverse).wait(), IsOk());
  EXPECT_EQ(plans().misses, 1u);
  fmt::print("cufft-plans: {} built in {} us\n", plans().builds, plans().build_micros);
  // A bad request is refused before launch and the stream goes on serving.
  EXPECT_THAT(device.ask(Fft{.shape = {.type = FftType::r2c, .n = {64}}, .input = a, .output = b}).wait(),
              StatusIs(Code::invalid_argument, "operand 'input' holds c64 but the request needs f32"));
  ASSERT_THAT(device.ask(fft).wait(), IsOk());
  // Precision is part of the key: the same shape in f16 is another plan, and a size cuFFT's half transforms do not
  // take is refused before the cache.
  const BufferHandle h = *device.ask(Allocate{.dtype = DType::c32, .count = 1 << 16}).wait();
  const BufferHandle other_h = *device.ask(Allocate{.dtype = DType::c32, .count = 1 << 16}).wait();
  Fft half{.shape = fft.shape, .input = h, .output = other_h};
  half.shape.precision = DType::f16;
  for (int i = 0; i < 2; ++i) ASSERT_THAT(device.ask(half).wait(), IsOk());
  EXPECT_EQ(plans().misses, 2u);
  EXPECT_EQ(plans().hits, 5u);
  half.shape.n = {4000};
  EXPECT_THAT(device.ask(half).wait(), StatusIs(Code::not_supported, "powers of two"));
  EXPECT_EQ(plans().misses, 2u);
  bool cufft = false;
  for (const LibraryVersion& library : device.info().wait()->libraries) cufft |= library.name == "cuFFT";
  EXPECT_TRUE(cufft);
}

// The generic path plans before it resolves the operands; a request whose handles do not fit is refused before a
// cuFFT plan is made all the same (fft_operation_cuda.cpp), with resolution's words.
TEST_F(CudaFftTest, WrongOperandsAreRefusedBeforeAnyPlanIsMade) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, {.kind = DeviceKind::cuda}, device);  // its own streams: counts from zero
  const BufferHandle a = *device.ask(Allocate{.dtype = DType::c64, .count = 4096}).wait();
  const BufferHandle short_b = *device.ask(Allocate{.dtype = DType::c64, .count = 4095}).wait();
  const BufferHandle real = *device.ask(Allocate{.dtype = DType::f32, .count = 4096}).wait();
  const BufferHandle wide = *device.ask(Allocate{.dtype = DType::c128, .count = 4096}).wait();
  auto builds = [&] {
    const Result<DeviceInfo> info = device.info().wait();
    const CacheStats* stats = info.ok() ? info->cache("cufft-plans") : nullptr;
    return stats != nullptr ? stats->builds + stats->misses + stats->hits : 0;
  };
  const std::uint64_t before = builds();
  const FftShape shape{.n = {4096}};
  EXPECT_THAT(device.ask(Fft{.shape = shape, .input = a, .output = short_b}).wait(),
              StatusIs(Code::invalid_argument, "operand 'output': elements [0, 0 + 4096) lie outside"));
  EXPECT_THAT(device.ask(Fft{.shape = shape, .input = real, .output = wide}).wait(),
              StatusIs(Code::invalid_argument, "operand 'input' holds f32 but the request needs c64"));
  EXPECT_THAT(device.ask(Fft{.shape = shape, .input = a, .output = wide}).wait(),
              StatusIs(Code::invalid_argument, "operand 'output' holds c128 but the request needs c64"));
  EXPECT_THAT(device.ask(Fft{.shape = shape, .input = a}).wait(),
              StatusIs(Code::invalid_argument, "operand 'output' is a null buffer handle"));
  EXPECT_EQ(builds(), before) << "a refused request reached the plan cache";
  // A handle that claims more than its buffer holds is refused by resolution, after the plan: the table's word.
  BufferHandle claims_more = short_b;
  claims_more.count = 4096;
  EXPECT_THAT(device.ask(Fft{.shape = shape, .input = a, .output = claims_more}).wait(),
              StatusIs(Code::invalid_argument, "claims 4096 x c64, but the buffer holds 4095 x c64"));
  const BufferHandle b = *device.ask(Allocate{.dtype = DType::c64, .count = 4096}).wait();
  ASSERT_THAT(device.ask(Fft{.shape = shape, .input = a, .output = b}).wait(), IsOk());
}

}  // namespace
}  // namespace accel

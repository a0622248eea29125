// FFT through the CPU device (FFTW) against a naive DFT in double, on fresh random sizes, layouts and data; the
// round trips the normalisations promise; the plan cache; the same request on an isolated CPU device.
#include <gtest/gtest.h>

#include <random>

#include "libs/fft/fft_testing.hpp"
#include "testing/test_seed.hpp"

namespace accel {
namespace {

using testing::IsOk;
using testing::fft::Complex;
using testing::fft::make_problem;
using testing::fft::Problem;
using testing::fft::relative_error;
using testing::fft::run_fft;

class CpuFftTest : public ::testing::Test {
 protected:
  // Runs `shape` on fresh random data and checks it against the naive DFT.
  void check(const FftShape& shape, bool in_place, bool real_buffer = false) {
    SCOPED_TRACE(to_string(shape) + (in_place ? " in place" : ""));
    Result<FftGeometry> geometry = plan_fft_geometry(shape, in_place);
    ASSERT_THAT(geometry, IsOk());
    const Problem problem = make_problem(*geometry, rng_);
    Result<testing::fft::Ran> ran = run_fft(device_, shape, in_place, problem.input, rng_, real_buffer);
    ASSERT_THAT(ran, IsOk());
    const double error = relative_error(ran->output, problem.expected);
    EXPECT_LE(error, shape.precision == DType::f64 ? 1e-12 : 2e-6) << "relative error " << error;
    EXPECT_TRUE(ran->gaps_kept) << "the transform wrote outside its output layout";
  }

  // f16 on the CPU device is FFTW's f32 transform of the widened input, rounded to f16 once. So against the f32
  // request on the same (f16-exact) input, its output rounded, it differs only where the two f32 runs differ (the
  // scratch arrays' alignment could pick other FFTW codelets) and that moves a rounding: far below f16's own
  // rounding error (2^-11 per part, about 3e-4 over a random vector). Measured: no difference at all over this
  // sweep (the same plan). Against the exact answer of the unrounded input: the input's rounding and the output's
  // (measured up to 5.4e-4, on the 4-element transforms).
  void check_half(const FftShape& shape, bool in_place, bool real_buffer = false) {
    SCOPED_TRACE(to_string(shape) + (in_place ? " in place" : ""));
    FftShape wide = shape;
    wide.precision = DType::f32;
    Result<FftGeometry> geometry = plan_fft_geometry(wide, in_place);
    ASSERT_THAT(geometry, IsOk());
    const Problem problem = make_problem(*geometry, rng_);
    const std::vector<Complex> input = testing::fft::rounded_to_half(problem.input);
    Result<testing::fft::Ran> half = run_fft(device_, shape, in_place, input, rng_, real_buffer);
    Result<testing::fft::Ran> single = run_fft(device_, wide, in_place, input, rng_, real_buffer);
    ASSERT_THAT(half, IsOk());
    ASSERT_THAT(single, IsOk());
    const double rounding = relative_error(half->output, testing::fft::rounded_to_half(single->output));
    EXPECT_LE(rounding, 2e-5) << "relative difference from the f32 result rounded: " << rounding;
    const double error = relative_error(half->output, problem.expected);
    EXPECT_LE(error, 1.5e-3) << "relative error " << error;
    EXPECT_TRUE(half->gaps_kept) << "the transform wrote outside its output layout";
  }

  FftShape random_shape(FftType type, int rank, DType precision) {
    std::uniform_int_distribution<std::int64_t> size(1, rank == 1 ? 40 : rank == 2 ? 12 : 7), batch(1, 3);
    FftShape shape{.type = type, .precision = precision, .rank = rank, .batch = batch(rng_)};
    for (int d = 0; d < rank; ++d) shape.n[d] = size(rng_);
    if (type == FftType::c2r || (type == FftType::c2c && rng_() % 2 == 0)) shape.direction = FftDirection::inverse;
    shape.normalization = static_cast<FftNormalization>(rng_() % 3);
    return shape;
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  std::mt19937_64 rng_{accel::testing::test_seed()};
};

TEST_F(CpuFftTest, ComplexToComplexMatchesTheNaiveDftInEveryRankBothWays) {
  for (DType precision : {DType::f32, DType::f64})
    for (int rank = 1; rank <= 3; ++rank)
      for (int trial = 0; trial < 4; ++trial) {
        const FftShape shape = random_shape(FftType::c2c, rank, precision);
        check(shape, false);
        check(shape, true);
      }
}

TEST_F(CpuFftTest, RealToComplexAndComplexToRealMatchTheNaiveDftForOddAndEvenSizes) {
  for (DType precision : {DType::f32, DType::f64})
    for (FftType type : {FftType::r2c, FftType::c2r})
      for (int rank = 1; rank <= 3; ++rank)
        for (std::int64_t last : {1, 2, 7, 8, 13}) {
          FftShape shape = random_shape(type, rank, precision);
          shape.n[rank - 1] = last;
          check(shape, false);
          check(shape, true);
          check(shape, true, /*real_buffer=*/true);
        }
}

TEST_F(CpuFftTest, PrimeAndLargerSizes) {
  for (std::int64_t n : {97, 127, 256, 1000, 1009})
    for (FftType type : {FftType::c2c, FftType::r2c, FftType::c2r}) {
      check({.type = type,
             .precision = DType::f64,
             .n = {n},
             .batch = 2,
             .direction = type == FftType::c2r ? FftDirection::inverse : FftDirection::forward},
            false);
    }
}

TEST_F(CpuFftTest, HalfPrecisionIsTheSinglePrecisionResultRounded) {
  for (FftNormalization normalization :
       {FftNormalization::none, FftNormalization::inverse, FftNormalization::orthonormal}) {
    for (FftDirection direction : {FftDirection::forward, FftDirection::inverse}) {
      for (const auto& [rank, n] :
           {std::pair{1, std::array<std::int64_t, 3>{8}}, std::pair{1, std::array<std::int64_t, 3>{1024}},
            std::pair{2, std::array<std::int64_t, 3>{16, 32}}, std::pair{3, std::array<std::int64_t, 3>{4, 8, 4}}}) {
        const FftShape shape{.precision = DType::f16,
                             .rank = rank,
                             .n = n,
                             .batch = 3,
                             .direction = direction,
                             .normalization = normalization};
        check_half(shape, false);
        check_half(shape, true);
      }
    }
    for (FftType type : {FftType::r2c, FftType::c2r}) {
      const FftDirection direction = type == FftType::r2c ? FftDirection::forward : FftDirection::inverse;
      for (const auto& [rank, n] :
           {std::pair{1, std::array<std::int64_t, 3>{2}}, std::pair{1, std::array<std::int64_t, 3>{256}},
            std::pair{2, std::array<std::int64_t, 3>{8, 16}}, std::pair{3, std::array<std::int64_t, 3>{2, 4, 8}}}) {
        const FftShape shape{.type = type,
                             .precision = DType::f16,
                             .rank = rank,
                             .n = n,
                             .batch = 2,
                             .direction = direction,
                             .normalization = normalization};
        check_half(shape, false);
        check_half(shape, true);
        check_half(shape, true, /*real_buffer=*/true);
      }
    }
  }
  // Strided and padded layouts: the f32 scratch keeps the layout, and the output's gaps stay the caller's.
  check_half({.precision = DType::f16,
              .rank = 2,
              .n = {4, 8},
              .batch = 3,
              .input = {.embed = {5, 8}, .stride = 2, .distance = 90},
              .output = {.embed = {4, 9}, .stride = 1, .distance = 40}},
             false);
  check_half({.type = FftType::r2c,
              .precision = DType::f16,
              .n = {64},
              .batch = 4,
              .input = {.distance = 70},
              .output = {.stride = 3, .distance = 100}},
             false);
  check_half({.type = FftType::c2r,
              .precision = DType::f16,
              .rank = 2,
              .n = {4, 16},
              .batch = 2,
              .direction = FftDirection::inverse,
              .input = {.embed = {4, 12}, .stride = 1, .distance = 50}},
             false);
}

TEST_F(CpuFftTest, BatchedAdvancedLayoutsWithStridesAndDistances) {
  for (DType precision : {DType::f32, DType::f64}) {
    // Padded embeds and a distance with a gap after each transform, stride 2 on the output.
    check({.type = FftType::c2c,
           .precision = precision,
           .rank = 2,
           .n = {5, 6},
           .batch = 3,
           .input = {.embed = {6, 8}, .stride = 1, .distance = 50},
           .output = {.embed = {5, 7}, .stride = 2, .distance = 75}},
          false);
    // Interleaved batches: element x of transform b at x * batch + b.
    check({.type = FftType::c2c,
           .precision = precision,
           .n = {12},
           .batch = 4,
           .direction = FftDirection::inverse,
           .input = {.stride = 4, .distance = 1},
           .output = {.stride = 4, .distance = 1}},
          false);
    check({.type = FftType::r2c,
           .precision = precision,
           .rank = 3,
           .n = {3, 4, 5},
           .batch = 2,
           .input = {.embed = {3, 5, 6}, .stride = 1, .distance = 100},
           .output = {.embed = {4, 4, 4}, .stride = 3}},
          false);
    check({.type = FftType::c2r,
           .precision = precision,
           .rank = 2,
           .n = {6, 9},
           .batch = 2,
           .direction = FftDirection::inverse,
           .normalization = FftNormalization::inverse,
           .input = {.embed = {7, 6}, .stride = 1, .distance = 45},
           .output = {.stride = 2}},
          false);
    // In place: c2c with a padded layout (the output side left zero takes it), r2c with padded complex rows.
    check({.type = FftType::c2c,
           .precision = precision,
           .rank = 2,
           .n = {4, 5},
           .batch = 2,
           .input = {.embed = {4, 7}, .stride = 1, .distance = 30}},
          true);
    check({.type = FftType::r2c,
           .precision = precision,
           .rank = 2,
           .n = {3, 7},
           .batch = 3,
           .output = {.embed = {3, 5}, .stride = 1, .distance = 16}},
          true);
  }
}

TEST_F(CpuFftTest, ForwardThenInverseWithInverseOrOrthonormalScalingReturnsTheInput) {
  for (DType precision : {DType::f32, DType::f64})
    for (FftNormalization normalization : {FftNormalization::inverse, FftNormalization::orthonormal})
      for (const auto& [rank, n] :
           {std::pair{1, std::array<std::int64_t, 3>{30}}, std::pair{2, std::array<std::int64_t, 3>{6, 9}},
            std::pair{3, std::array<std::int64_t, 3>{4, 3, 5}}}) {
        const double tolerance = precision == DType::f64 ? 1e-13 : 2e-6;
        // c2c: forward, then inverse on the forward's output.
        FftShape forward{.precision = precision, .rank = rank, .n = n, .batch = 2, .normalization = normalization};
        Result<FftGeometry> g = plan_fft_geometry(forward, false);
        ASSERT_THAT(g, IsOk());
        const Problem problem = make_problem(*g, rng_);
        Result<testing::fft::Ran> spectrum = run_fft(device_, forward, false, problem.input, rng_);
        ASSERT_THAT(spectrum, IsOk());
        FftShape inverse = forward;
        inverse.direction = FftDirection::inverse;
        Result<testing::fft::Ran> back = run_fft(device_, inverse, true, spectrum->output, rng_);
        ASSERT_THAT(back, IsOk());
        EXPECT_LE(relative_error(back->output, problem.input), tolerance) << to_string(forward);
        // r2c, then c2r.
        forward.type = FftType::r2c;
        Result<FftGeometry> real = plan_fft_geometry(forward, false);
        ASSERT_THAT(real, IsOk());
        const Problem real_problem = make_problem(*real, rng_);
        Result<testing::fft::Ran> half = run_fft(device_, forward, false, real_problem.input, rng_);
        ASSERT_THAT(half, IsOk());
        inverse.type = FftType::c2r;
        Result<testing::fft::Ran> real_back = run_fft(device_, inverse, false, half->output, rng_);
        ASSERT_THAT(real_back, IsOk());
        EXPECT_LE(relative_error(real_back->output, real_problem.input), tolerance) << to_string(inverse);
      }
}

TEST_F(CpuFftTest, ARepeatedRequestHitsThePlanCache) {
  auto plans = [&] {
    Result<DeviceInfo> info = device_.info().wait();
    EXPECT_THAT(info, IsOk());
    const CacheStats* stats = info.ok() ? info->cache("fftw-plans") : nullptr;
    EXPECT_NE(stats, nullptr);
    return stats != nullptr ? *stats : CacheStats{};
  };
  // A size no other test uses, so the first run builds.
  const FftShape shape{.precision = DType::f64, .rank = 2, .n = {17, 23}, .batch = 5};
  Result<FftGeometry> g = plan_fft_geometry(shape, false);
  ASSERT_THAT(g, IsOk());
  const Problem problem = make_problem(*g, rng_);
  const CacheStats before = plans();
  for (int run = 0; run < 3; ++run) ASSERT_THAT(run_fft(device_, shape, false, problem.input, rng_), IsOk());
  const CacheStats after = plans();
  EXPECT_EQ(after.misses - before.misses, 1u);
  EXPECT_EQ(after.builds - before.builds, 1u);
  EXPECT_EQ(after.hits - before.hits, 2u);
  // The other direction is another FFTW plan (the sign is part of it).
  FftShape inverse = shape;
  inverse.direction = FftDirection::inverse;
  ASSERT_THAT(run_fft(device_, inverse, false, problem.input, rng_), IsOk());
  EXPECT_EQ(plans().misses - before.misses, 2u);
  const Result<DeviceInfo> info = device_.info().wait();
  ASSERT_THAT(info, IsOk());
  bool fftw = false;
  for (const LibraryVersion& library : info->libraries) fftw |= library.name == "FFTW";
  EXPECT_TRUE(fftw);
}

TEST_F(CpuFftTest, AnIsolatedCpuDeviceGivesTheSameBits) {
  Result<Device> isolated = Device::open(system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  for (const FftShape& shape :
       {FftShape{.rank = 2, .n = {8, 6}, .batch = 2, .normalization = FftNormalization::orthonormal},
        FftShape{.type = FftType::r2c, .precision = DType::f64, .n = {31}, .batch = 3},
        FftShape{
            .precision = DType::f16, .rank = 2, .n = {8, 16}, .batch = 2, .normalization = FftNormalization::inverse},
        FftShape{.type = FftType::c2r, .precision = DType::f16, .n = {64}, .direction = FftDirection::inverse}}) {
    Result<FftGeometry> g = plan_fft_geometry(shape, false);
    ASSERT_THAT(g, IsOk());
    const Problem problem = make_problem(*g, rng_);
    std::mt19937_64 fill(7), same_fill(7);
    Result<testing::fft::Ran> here = run_fft(device_, shape, false, problem.input, fill);
    Result<testing::fft::Ran> there = run_fft(*isolated, shape, false, problem.input, same_fill);
    ASSERT_THAT(here, IsOk());
    ASSERT_THAT(there, IsOk());
    EXPECT_EQ(here->output, there->output) << to_string(shape);
  }
}

}  // namespace
}  // namespace accel

// Statistical sanity of rand::Generate on the CPU device, on a million numbers per case: mean, variance and the
// Kolmogorov-Smirnov statistic for Philox's uniform and normal numbers (and the rest), and cuRAND's host-side
// generators, which also repeat and resume (or answer not_supported where accel was built without the toolkit).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "libs/rand/rand_testing.hpp"
#include "testing/status_matchers.hpp"

namespace accel::rand {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using testing::as_doubles;
using testing::generate;

constexpr std::uint64_t kMillion = 1 << 20;

class RandStatisticsTest : public ::testing::Test {
 protected:
  template <class T>
  std::vector<double> sample(Generate request) {
    Result<std::vector<T>> values = generate<T>(device_, request);
    EXPECT_THAT(values, IsOk());
    return values.ok() ? as_doubles(*values) : std::vector<double>{};
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
};

TEST_F(RandStatisticsTest, PhiloxUniformNumbersAreUniform) {
  testing::expect_uniform(sample<float>({.seed = 1, .count = kMillion}));
  testing::expect_uniform(sample<double>({.dtype = DType::f64, .seed = 2, .offset = 3, .count = kMillion}));
}

TEST_F(RandStatisticsTest, PhiloxNormalAndLogNormalNumbersAreNormal) {
  testing::expect_normal(sample<float>({.distribution = Distribution::normal, .seed = 3, .count = kMillion}), 0, 1);
  testing::expect_normal(sample<double>({.distribution = Distribution::normal,
                                         .dtype = DType::f64,
                                         .seed = 4,
                                         .offset = 1,
                                         .count = kMillion,
                                         .mean = -3,
                                         .stddev = 0.5}),
                         -3, 0.5);
  testing::expect_log_normal(
      sample<float>(
          {.distribution = Distribution::log_normal, .seed = 5, .count = kMillion, .mean = 1, .stddev = 0.25}),
      1, 0.25);
  testing::expect_log_normal(sample<double>({.distribution = Distribution::log_normal,
                                             .dtype = DType::f64,
                                             .seed = 6,
                                             .count = kMillion / 4,
                                             .stddev = 2}),
                             0, 2);
}

// Each of Poisson's three methods (Knuth below 64, rejection to 4000, the normal approximation above).
TEST_F(RandStatisticsTest, PhiloxPoissonCountsHaveMeanAndVarianceLambda) {
  for (double lambda : {0.5, 10.0, 100.0, 1000.0, 5000.0})
    testing::expect_poisson(sample<std::uint32_t>({.distribution = Distribution::poisson,
                                                   .dtype = DType::u32,
                                                   .seed = 7,
                                                   .count = kMillion / 4,
                                                   .lambda = lambda}),
                            lambda);
}

TEST_F(RandStatisticsTest, PhiloxBitsAreBalanced) {
  const std::vector<double> words =
      sample<std::uint32_t>({.distribution = Distribution::bits, .dtype = DType::u32, .seed = 8, .count = kMillion});
  std::vector<double> set(32, 0);
  for (double w : words)
    for (int bit = 0; bit < 32; ++bit) set[bit] += (static_cast<std::uint32_t>(w) >> bit) & 1;
  const double n = static_cast<double>(words.size());
  for (int bit = 0; bit < 32; ++bit) EXPECT_NEAR(set[bit] / n, 0.5, testing::kSigmas * 0.5 / std::sqrt(n)) << bit;
}

// cuRAND's host-side generators where accel has the toolkit; not_supported, naming the generator, elsewhere.
class HostApiGeneratorTest : public RandStatisticsTest, public ::testing::WithParamInterface<Generator> {
 protected:
  bool supported() {
    const Status status = generate<float>(device_, {.generator = GetParam(), .count = 2}).status();
    if (status.ok()) return true;
    EXPECT_THAT(status, StatusIs(Code::not_supported, std::string(to_string(GetParam()))));
#if ACCEL_HAVE_CUDA
    ADD_FAILURE() << "accel was built with the CUDA toolkit, so cuRAND's host generators should run";
#endif
    return false;
  }
  std::uint64_t seed() const { return GetParam() == Generator::sobol32 ? 0 : 99; }
};

TEST_P(HostApiGeneratorTest, NumbersHaveTheirDistributions) {
  if (!supported()) return;
  const std::uint64_t n = kMillion / 8;
  testing::expect_uniform(sample<float>({.generator = GetParam(), .seed = seed(), .count = n}));
  testing::expect_uniform(sample<double>({.generator = GetParam(), .dtype = DType::f64, .seed = seed(), .count = n}));
  testing::expect_normal(sample<float>({.generator = GetParam(),
                                        .distribution = Distribution::normal,
                                        .seed = seed(),
                                        .count = n,
                                        .mean = 2,
                                        .stddev = 3}),
                         2, 3);
  testing::expect_log_normal(sample<double>({.generator = GetParam(),
                                             .distribution = Distribution::log_normal,
                                             .dtype = DType::f64,
                                             .seed = seed(),
                                             .count = n,
                                             .stddev = 0.5}),
                             0, 0.5);
  testing::expect_poisson(sample<std::uint32_t>({.generator = GetParam(),
                                                 .distribution = Distribution::poisson,
                                                 .dtype = DType::u32,
                                                 .seed = seed(),
                                                 .count = n,
                                                 .lambda = 20}),
                          20);
}

// cuRAND's offset counts the generator's 32-bit outputs, which is one element per output for bits, uniform f32
// and Poisson (and every distribution of Sobol32): there an offset continues a run exactly.
TEST_P(HostApiGeneratorTest, StreamsRepeatAndResumeWhereCuRandCountsElements) {
  if (!supported()) return;
  Generate bits{
      .generator = GetParam(), .distribution = Distribution::bits, .dtype = DType::u32, .seed = seed(), .count = 5000};
  Generate uniform{.generator = GetParam(), .seed = seed(), .count = 5000};
  Generate poisson{.generator = GetParam(),
                   .distribution = Distribution::poisson,
                   .dtype = DType::u32,
                   .seed = seed(),
                   .count = 5000,
                   .lambda = 4};
  for (const Generate& request : {bits, uniform, poisson}) {
    SCOPED_TRACE(to_string(request.distribution));
    const std::vector<double> whole =
        request.dtype == DType::u32 ? sample<std::uint32_t>(request) : sample<float>(request);
    const std::vector<double> again =
        request.dtype == DType::u32 ? sample<std::uint32_t>(request) : sample<float>(request);
    EXPECT_EQ(whole, again);
    Generate part = request;
    part.offset = 1237;
    part.count = 2000;
    const std::vector<double> resumed = request.dtype == DType::u32 ? sample<std::uint32_t>(part) : sample<float>(part);
    ASSERT_EQ(resumed.size(), 2000u);
    EXPECT_TRUE(std::equal(resumed.begin(), resumed.end(), whole.begin() + 1237));
  }
}

INSTANTIATE_TEST_SUITE_P(Generators, HostApiGeneratorTest,
                         ::testing::Values(Generator::xorwow, Generator::mrg32k3a, Generator::sobol32),
                         [](const ::testing::TestParamInfo<Generator>& info) {
                           return std::string(to_string(info.param));
                         });

}  // namespace
}  // namespace accel::rand

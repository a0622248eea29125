// rand::Generate on the CPU device: named errors for bad requests, Philox4x32-10's known answers, streams that
// repeat and resume exactly, and cuRAND's host-side generators (or not_supported where accel has no toolkit).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "libs/rand/philox.hpp"
#include "libs/rand/rand_testing.hpp"
#include "testing/status_matchers.hpp"

namespace accel::rand {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using testing::generate;

class RandTest : public ::testing::Test {
 protected:
  Status run(Generate request) {
    Buffer<float> f32 = *device_.allocate<float>(64).wait();
    Buffer<double> f64 = *device_.allocate<double>(64).wait();
    Buffer<std::uint32_t> u32 = *device_.allocate<std::uint32_t>(64).wait();
    if (request.output.is_null()) {
      request.output = request.dtype == DType::f64   ? BufferHandle(f64)
                       : request.dtype == DType::u32 ? BufferHandle(u32)
                                                     : BufferHandle(f32);
    }
    return device_.ask(request).wait().status();
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
};

TEST_F(RandTest, BadRequestsAreNamedErrors) {
  const Code bad = Code::invalid_argument;
  EXPECT_THAT(run({.distribution = Distribution::bits, .dtype = DType::f32, .count = 4}),
              StatusIs(bad, "bits makes u32"));
  EXPECT_THAT(run({.distribution = Distribution::uniform, .dtype = DType::u32, .count = 4}),
              StatusIs(bad, "uniform makes f32 or f64, not u32"));
  EXPECT_THAT(run({.distribution = Distribution::log_normal, .dtype = DType::f16, .count = 4}),
              StatusIs(bad, "log_normal makes f32 or f64"));
  EXPECT_THAT(run({.distribution = Distribution::poisson, .dtype = DType::f32, .count = 4}),
              StatusIs(bad, "poisson makes u32"));
  for (double stddev : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
    EXPECT_THAT(run({.distribution = Distribution::normal, .count = 4, .stddev = stddev}), StatusIs(bad, "stddev"));
  EXPECT_THAT(
      run({.distribution = Distribution::log_normal, .count = 4, .mean = -std::numeric_limits<double>::infinity()}),
      StatusIs(bad, "mean must be finite"));
  for (double lambda : {0.0, -2.0, 2e9, std::numeric_limits<double>::quiet_NaN()})
    EXPECT_THAT(run({.distribution = Distribution::poisson, .dtype = DType::u32, .count = 4, .lambda = lambda}),
                StatusIs(bad, "lambda must be > 0"));
  EXPECT_THAT(run({.generator = Generator::sobol32, .seed = 7, .count = 4}), StatusIs(bad, "takes no seed"));
  for (Generator g : {Generator::xorwow, Generator::mrg32k3a})
    for (Distribution d : {Distribution::normal, Distribution::log_normal})
      EXPECT_THAT(run({.generator = g, .distribution = d, .count = 5}), StatusIs(bad, "count must be even"));
  EXPECT_THAT(run({.offset = std::numeric_limits<std::uint64_t>::max() - 2, .count = 4}), StatusIs(bad, "overflows"));
  EXPECT_THAT(run({.offset = kPhiloxStreamElements - 3, .count = 4}), StatusIs(bad, "2^62"));
  // Requests cross from other processes byte for byte: out-of-range enums are refused, not trusted.
  EXPECT_THAT(run({.generator = static_cast<Generator>(9), .count = 4}), StatusIs(bad, "generator 9"));
  EXPECT_THAT(run({.distribution = static_cast<Distribution>(200), .count = 4}), StatusIs(bad, "distribution 200"));
  EXPECT_THAT(run({.dtype = static_cast<DType>(99), .count = 4}), StatusIs(bad, "dtype 99"));
}

TEST_F(RandTest, TheOutputMustHoldCountElementsOfTheDtype) {
  Buffer<float> small = *device_.allocate<float>(8).wait();
  Buffer<double> doubles = *device_.allocate<double>(64).wait();
  EXPECT_THAT(run({.count = 9, .output = small}), StatusIs(Code::invalid_argument, "lie outside"));
  EXPECT_THAT(run({.count = 4, .output = doubles}),
              StatusIs(Code::invalid_argument, "holds f64 but the request needs f32"));
  EXPECT_THAT(device_.ask(Generate{.count = 4}).wait(), StatusIs(Code::invalid_argument, "null buffer handle"));
  const BufferHandle freed = small;
  ASSERT_THAT(device_.free(freed).wait(), IsOk());
  EXPECT_THAT(run({.count = 4, .output = freed}), StatusIs(Code::stale_handle));
  // A refused request writes nothing.
  std::vector<double> before(64, 0.25);
  ASSERT_THAT(device_.upload(std::span<const double>(before), doubles).wait(), IsOk());
  EXPECT_THAT(run({.dtype = DType::f64, .count = 65, .output = doubles}), StatusIs(Code::invalid_argument));
  std::vector<double> after(64);
  ASSERT_THAT(device_.download(doubles, std::span<double>(after)).wait(), IsOk());
  EXPECT_EQ(after, before);
  EXPECT_THAT(run({.count = 0}), IsOk());
}

// The known-answer vectors of Random123 (kat_vectors, philox4x32_10) for the pure function; the first one is
// also what the device answers for seed 0's first four words.
TEST_F(RandTest, PhiloxMatchesRandom123KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, 0, 0), (PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff),
            (PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0),
            (PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));

  Result<std::vector<std::uint32_t>> words =
      generate<std::uint32_t>(device_, {.distribution = Distribution::bits, .dtype = DType::u32, .count = 6});
  ASSERT_THAT(words, IsOk());
  const PhiloxBlock second = philox4x32_10({1, 0, 0, 0}, 0, 0);
  EXPECT_EQ(*words, (std::vector<std::uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8, second[0], second[1]}));
  // The seed is the key, low word first; the element's block is the counter's low 64 bits.
  const std::uint64_t seed = 0x299f31d0a4093822;
  Result<std::vector<std::uint32_t>> far = generate<std::uint32_t>(device_, {.distribution = Distribution::bits,
                                                                             .dtype = DType::u32,
                                                                             .seed = seed,
                                                                             .offset = 4 * 0x05a308d3243f6a88,
                                                                             .count = 4});
  ASSERT_THAT(far, IsOk());
  const PhiloxBlock expected = philox4x32_10({0x243f6a88, 0x05a308d3, 0, 0}, 0xa4093822, 0x299f31d0);
  EXPECT_EQ(*far, std::vector<std::uint32_t>(expected.begin(), expected.end()));
}

// Every kind of Philox output, run once from 0 and again from offsets that start mid-block and mid-pair: the same
// bits where the runs overlap; a second seed gives other numbers.
template <class T>
void expect_resumes(const Device& device, Generate request) {
  SCOPED_TRACE(std::string(to_string(request.distribution)) + " " + std::string(to_string(request.dtype)));
  request.count = 301;
  Result<std::vector<T>> whole = generate<T>(device, request);
  ASSERT_THAT(whole, IsOk());
  Result<std::vector<T>> again = generate<T>(device, request);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(std::memcmp(whole->data(), again->data(), whole->size() * sizeof(T)), 0);
  for (std::uint64_t offset : {1, 2, 3, 5, 6, 7, 64, 171}) {
    Generate part = request;
    part.offset = offset;
    part.count = request.count - offset - offset % 3;
    Result<std::vector<T>> resumed = generate<T>(device, part);
    ASSERT_THAT(resumed, IsOk());
    EXPECT_EQ(std::memcmp(resumed->data(), whole->data() + offset, resumed->size() * sizeof(T)), 0)
        << "from offset " << offset;
  }
  request.seed ^= 1;
  Result<std::vector<T>> other = generate<T>(device, request);
  ASSERT_THAT(other, IsOk());
  EXPECT_NE(std::memcmp(other->data(), whole->data(), whole->size() * sizeof(T)), 0);
}

TEST_F(RandTest, PhiloxStreamsRepeatAndResumeAtAnyElement) {
  const std::uint64_t seed = 0x1234567890abcdef;
  expect_resumes<std::uint32_t>(device_, {.distribution = Distribution::bits, .dtype = DType::u32, .seed = seed});
  for (Distribution d : {Distribution::uniform, Distribution::normal, Distribution::log_normal}) {
    expect_resumes<float>(device_, {.distribution = d, .dtype = DType::f32, .seed = seed, .mean = 0.5, .stddev = 2});
    expect_resumes<double>(device_, {.distribution = d, .dtype = DType::f64, .seed = seed, .mean = 0.5, .stddev = 2});
  }
  for (double lambda : {0.5, 30.0, 700.0, 9000.0})
    expect_resumes<std::uint32_t>(
        device_, {.distribution = Distribution::poisson, .dtype = DType::u32, .seed = seed, .lambda = lambda});
}

TEST_F(RandTest, NormalsComeInBoxMullerPairsOfOneRadius) {
  Result<std::vector<float>> n = generate<float>(device_, {.distribution = Distribution::normal, .count = 1000});
  Result<std::vector<float>> u = generate<float>(device_, {.distribution = Distribution::uniform, .count = 1000});
  ASSERT_THAT(n, IsOk());
  ASSERT_THAT(u, IsOk());
  for (std::size_t i = 0; i < 1000; i += 2) {
    // The pair's radius is sqrt(-2 ln u) of the first word's uniform.
    const double radius = std::hypot((*n)[i], (*n)[i + 1]);
    EXPECT_NEAR(radius, std::sqrt(-2 * std::log(static_cast<double>((*u)[i]))), 1e-5 * (1 + radius)) << i;
  }
}

// The request crosses to a worker process byte for byte and runs there through the same contract.
TEST_F(RandTest, AnIsolatedCpuDeviceMakesTheSameNumbers) {
  Result<Device> isolated = Device::open(system_, {.kind = DeviceKind::cpu, .isolation = Isolation::worker_process});
  ASSERT_THAT(isolated, IsOk());
  const Generate normal{.distribution = Distribution::normal,
                        .dtype = DType::f64,
                        .seed = 3,
                        .offset = 11,
                        .count = 1001,
                        .mean = 1,
                        .stddev = 2};
  Result<std::vector<double>> here = generate<double>(device_, normal), there = generate<double>(*isolated, normal);
  ASSERT_THAT(here, IsOk());
  ASSERT_THAT(there, IsOk());
  EXPECT_EQ(std::memcmp(here->data(), there->data(), here->size() * sizeof(double)), 0);
  EXPECT_THAT(isolated->ask(Generate{.generator = Generator::sobol32, .seed = 1, .count = 4}).wait(),
              StatusIs(Code::invalid_argument, "takes no seed"));
}

}  // namespace
}  // namespace accel::rand

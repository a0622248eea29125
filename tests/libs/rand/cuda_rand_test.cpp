// rand::Generate on the GPU against the CPU device. Philox4x32-10: u32 bits and uniform numbers bit for bit, normal
// and log-normal numbers within the bounds the two sides' arithmetic allows (printed: the largest difference in
// ulps, and in shares of its bound), Poisson counts equal but for a measured share; over several seeds, offsets
// (odd ones, mid-block) and counts, in process and on an isolated device. cuRAND's host-API generators: their
// statistics, repeated runs, resumed runs, one cached generator per stream and kind. Skipped without a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "libs/rand/rand_testing.hpp"
#include "testing/cuda_fixture.hpp"
#include "testing/numeric_error.hpp"

namespace accel::rand {
namespace {

using accel::testing::IsOk;
using accel::testing::StatusIs;
using testing::as_doubles;
using testing::generate;

template <class T>
double ulp(T x) {
  const T a = std::fabs(x);
  return static_cast<double>(std::nextafter(a, std::numeric_limits<T>::infinity()) - a);
}

// The distance in representable values between two floats of one type.
template <class T>
double ulps_apart(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  auto ordered = [](T x) {
    const Bits bits = std::bit_cast<Bits>(x);
    return bits < 0 ? std::numeric_limits<Bits>::min() - bits : bits;
  };
  return std::fabs(static_cast<double>(ordered(a)) - static_cast<double>(ordered(b)));
}

struct Case {
  std::uint64_t seed;
  std::uint64_t offset;
  std::uint64_t count;
};

const Case kCases[] = {{0, 0, 1},
                       {42, 1, 3},
                       {42, 2, 4},
                       {7, 3, 1000},
                       {7, 5, 4097},
                       {0xdeadbeefcafe, 6, 999},
                       {1, 0, 1 << 20},
                       {2, 4097, (1 << 20) + 7},
                       {3, (1ull << 40) + 3, 65537}};

class CudaRandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ACCEL_OPEN_CUDA_OR_SKIP(system_, {.kind = DeviceKind::cuda}, device);
    gpu_ = device;
  }

  // Both devices, the same request.
  template <class T>
  void both(const Device& gpu, const Generate& request, std::vector<T>& on_gpu, std::vector<T>& on_cpu) {
    Result<std::vector<T>> g = generate<T>(gpu, request), c = generate<T>(cpu_, request);
    ASSERT_THAT(g, IsOk());
    ASSERT_THAT(c, IsOk());
    on_gpu = std::move(*g);
    on_cpu = std::move(*c);
  }

  template <class T>
  void expect_identical(const Device& gpu, Generate request) {
    for (const Case& c : kCases) {
      request.seed = c.seed, request.offset = c.offset, request.count = c.count;
      std::vector<T> g, cpu;
      both(gpu, request, g, cpu);
      std::size_t first = g.size();
      for (std::size_t i = 0; i < g.size() && first == g.size(); ++i)
        if (std::memcmp(&g[i], &cpu[i], sizeof(T)) != 0) first = i;
      EXPECT_EQ(first, g.size()) << fmt::format("{} {}: seed {} offset {} count {}: first difference at {}",
                                                to_string(request.distribution), to_string(request.dtype), c.seed,
                                                c.offset, c.count, first);
    }
  }

  // Normal and log-normal numbers: each GPU element within its bound of the CPU's. The bound comes from the
  // standard normals of the same stream (CPU): f32 normals carry __sincosf's error, about 2^-21 of the pair's
  // radius r (allowed 2^-19 r); f64 ones a few ulp (allowed 16); both scaled by stddev, plus the last roundings.
  template <class T>
  void expect_close(const Device& gpu, Generate request) {
    const bool f32 = sizeof(T) == 4, log_normal = request.distribution == Distribution::log_normal;
    double worst_ulps = 0, worst_share = 0;
    for (const Case& c : kCases) {
      request.seed = c.seed, request.offset = c.offset, request.count = c.count;
      std::vector<T> g, cpu;
      both(gpu, request, g, cpu);
      // The pairs around [offset, offset + count): from the even element at or before offset.
      const std::uint64_t first = c.offset & ~std::uint64_t{1};
      Result<std::vector<T>> standard =
          generate<T>(cpu_, {.distribution = Distribution::normal,
                             .dtype = request.dtype,
                             .seed = c.seed,
                             .offset = first,
                             .count = (c.offset + c.count + 1 - first) & ~std::uint64_t{1}});
      ASSERT_THAT(standard, IsOk());
      for (std::size_t i = 0; i < g.size(); ++i) {
        const std::size_t at = c.offset - first + i, pair = at & ~std::size_t{1};
        const double n = (*standard)[at], r = std::hypot((*standard)[pair], (*standard)[pair + 1]);
        const double normal_error = request.stddev * (f32 ? 0x1p-19 * r : 16 * ulp<T>(static_cast<T>(n)));
        const double y = cpu[i], arg = request.mean + request.stddev * n;
        const double bound = log_normal ? y * (normal_error + (std::fabs(arg) + 8) * (f32 ? 0x1p-23 : 0x1p-52))
                                        : normal_error + 2 * ulp<T>(cpu[i]);
        const double difference = std::fabs(static_cast<double>(g[i]) - y);
        worst_ulps = std::max(worst_ulps, ulps_apart(g[i], cpu[i]));
        worst_share = std::max(worst_share, difference / bound);
        if (!accel::testing::within(difference, bound)) {  // a NaN on either side fails
          ADD_FAILURE() << fmt::format("{} {}: seed {} offset {} element {}: GPU {} CPU {} differ by {} > {}",
                                       to_string(request.distribution), to_string(request.dtype), c.seed, c.offset, i,
                                       g[i], cpu[i], difference, bound);
          return;
        }
      }
    }
    std::cout << fmt::format("{} {} (mean {}, stddev {}): largest difference {} ulp, {:.3f} of its bound\n",
                             to_string(request.distribution), to_string(request.dtype), request.mean, request.stddev,
                             worst_ulps, worst_share);
  }

  System system_;
  std::optional<Device> gpu_;
  Device cpu_ = *Device::open(system_, {.kind = DeviceKind::cpu});
};

TEST_F(CudaRandTest, PhiloxBitsAndUniformNumbersAreTheCpusBitForBit) {
  expect_identical<std::uint32_t>(*gpu_, {.distribution = Distribution::bits, .dtype = DType::u32});
  expect_identical<float>(*gpu_, {.distribution = Distribution::uniform, .dtype = DType::f32});
  expect_identical<double>(*gpu_, {.distribution = Distribution::uniform, .dtype = DType::f64});
}

TEST_F(CudaRandTest, PhiloxNormalAndLogNormalNumbersAreTheCpusWithinUlps) {
  for (Distribution d : {Distribution::normal, Distribution::log_normal}) {
    expect_close<float>(*gpu_, {.distribution = d, .dtype = DType::f32});
    expect_close<double>(*gpu_, {.distribution = d, .dtype = DType::f64});
    expect_close<float>(*gpu_, {.distribution = d, .dtype = DType::f32, .mean = -0.5, .stddev = 1.5});
    expect_close<double>(*gpu_, {.distribution = d, .dtype = DType::f64, .mean = 0.25, .stddev = 0.75});
  }
}

// Knuth's products (lambda < 64) meet 1 on the other side only where expf's last bits differ; the rejection
// method (64..4000) runs on the GPU's approximate rsqrt, lg2, ex2 and rcp; the normal approximation (above 4000)
// rounds at a half now and then.
TEST_F(CudaRandTest, PhiloxPoissonCountsAreTheCpusButForAMeasuredShare) {
  const std::pair<double, double> kLimits[] = {{0.5, 1e-4},  {10, 1e-4},   {63.5, 1e-4}, {100, 2e-2},
                                               {1000, 2e-2}, {4000, 2e-2}, {5000, 1e-4}, {1e6, 1e-4}};
  for (const auto& [lambda, limit] : kLimits) {
    std::vector<std::uint32_t> g, cpu;
    both(*gpu_,
         {.distribution = Distribution::poisson,
          .dtype = DType::u32,
          .seed = 11,
          .offset = 5,
          .count = 1 << 20,
          .lambda = lambda},
         g, cpu);
    std::size_t differ = 0;
    std::int64_t largest = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      if (g[i] == cpu[i]) continue;
      ++differ;
      largest = std::max<std::int64_t>(largest, std::abs(static_cast<std::int64_t>(g[i]) - cpu[i]));
    }
    const double share = static_cast<double>(differ) / static_cast<double>(g.size());
    std::cout << fmt::format("poisson({}): {} of {} counts differ ({:.2e}), by at most {}\n", lambda, differ, g.size(),
                             share, largest);
    EXPECT_LE(share, limit) << "lambda " << lambda;
    // cuRAND's rejection method (64..4000) is approximate: on the H100 (2026-11-23) its variance at lambda 4000
    // came out 0.85 % low over 2^20 draws, 5 standard errors; the test holds it to 2 % there.
    testing::expect_poisson(as_doubles(g), lambda, lambda >= 64 && lambda <= 4000 ? 0.02 : 0);
  }
}

TEST_F(CudaRandTest, PhiloxStatisticsOnTheGpu) {
  const std::uint64_t n = 1 << 22;
  Result<std::vector<float>> u = generate<float>(*gpu_, {.seed = 21, .count = n});
  Result<std::vector<float>> z = generate<float>(*gpu_, {.distribution = Distribution::normal, .seed = 22, .count = n});
  Result<std::vector<double>> l = generate<double>(
      *gpu_, {.distribution = Distribution::log_normal, .dtype = DType::f64, .seed = 23, .count = n, .stddev = 0.5});
  ASSERT_THAT(u, IsOk());
  ASSERT_THAT(z, IsOk());
  ASSERT_THAT(l, IsOk());
  testing::expect_uniform(as_doubles(*u));
  testing::expect_normal(as_doubles(*z), 0, 1);
  testing::expect_log_normal(as_doubles(*l), 0, 0.5);
}

class CudaHostApiTest : public CudaRandTest, public ::testing::WithParamInterface<Generator> {
 protected:
  std::uint64_t seed() const { return GetParam() == Generator::sobol32 ? 0 : 1234; }
};

TEST_P(CudaHostApiTest, NumbersHaveTheirDistributions) {
  const std::uint64_t n = 1 << 22;
  const Generator gen = GetParam();
  Result<std::vector<float>> u = generate<float>(*gpu_, {.generator = gen, .seed = seed(), .count = n});
  Result<std::vector<double>> z = generate<double>(*gpu_, {.generator = gen,
                                                           .distribution = Distribution::normal,
                                                           .dtype = DType::f64,
                                                           .seed = seed(),
                                                           .count = n,
                                                           .mean = 1,
                                                           .stddev = 2});
  Result<std::vector<float>> l = generate<float>(
      *gpu_, {.generator = gen, .distribution = Distribution::log_normal, .seed = seed(), .count = n, .stddev = 0.5});
  Result<std::vector<std::uint32_t>> p = generate<std::uint32_t>(*gpu_, {.generator = gen,
                                                                         .distribution = Distribution::poisson,
                                                                         .dtype = DType::u32,
                                                                         .seed = seed(),
                                                                         .count = n,
                                                                         .lambda = 50});
  ASSERT_THAT(u, IsOk());
  ASSERT_THAT(z, IsOk());
  ASSERT_THAT(l, IsOk());
  ASSERT_THAT(p, IsOk());
  testing::expect_uniform(as_doubles(*u));
  testing::expect_normal(*z, 1, 2);
  testing::expect_log_normal(as_doubles(*l), 0, 0.5);
  testing::expect_poisson(as_doubles(*p), 50);
}

// The same seed and offset give the same numbers; an offset continues a run of bits or uniform numbers exactly
// (cuRAND's offset counts 32-bit outputs); the stream keeps one generator per kind.
TEST_P(CudaHostApiTest, RunsRepeatResumeAndShareTheStreamsGenerator) {
  const auto check = [&]<class T>(Generate whole, T) {
    SCOPED_TRACE(to_string(whole.distribution));
    Result<std::vector<T>> a = generate<T>(*gpu_, whole), b = generate<T>(*gpu_, whole);
    Generate part = whole;
    part.offset = 4099;
    part.count = 50000;
    Result<std::vector<T>> resumed = generate<T>(*gpu_, part);
    ASSERT_THAT(a, IsOk());
    ASSERT_THAT(b, IsOk());
    ASSERT_THAT(resumed, IsOk());
    EXPECT_EQ(std::memcmp(a->data(), b->data(), a->size() * sizeof(T)), 0);
    EXPECT_EQ(std::memcmp(resumed->data(), a->data() + part.offset, resumed->size() * sizeof(T)), 0);
  };
  check(Generate{.generator = GetParam(),
                 .distribution = Distribution::bits,
                 .dtype = DType::u32,
                 .seed = seed(),
                 .count = 100000},
        std::uint32_t{});
  check(Generate{.generator = GetParam(), .seed = seed(), .count = 100000}, float{});
  Result<DeviceInfo> info = gpu_->info().wait();
  ASSERT_THAT(info, IsOk());
  const CacheStats* generators = info->cache("curand-generators");
  ASSERT_NE(generators, nullptr);
  EXPECT_EQ(generators->builds, 1u);
  EXPECT_EQ(generators->entries, 1u);
  EXPECT_GE(generators->hits, 5u);
}

INSTANTIATE_TEST_SUITE_P(Generators, CudaHostApiTest,
                         ::testing::Values(Generator::xorwow, Generator::mrg32k3a, Generator::sobol32),
                         [](const ::testing::TestParamInfo<Generator>& info) {
                           return std::string(to_string(info.param));
                         });

TEST_F(CudaRandTest, WrongBuffersAreRefusedBeforeAnythingRuns) {
  Buffer<float> small = *gpu_->allocate<float>(8).wait();
  EXPECT_THAT(gpu_->ask(Generate{.count = 9, .output = small}).wait(), StatusIs(Code::invalid_argument, "outside"));
  EXPECT_THAT(gpu_->ask(Generate{.dtype = DType::f64, .count = 4, .output = small}).wait(),
              StatusIs(Code::invalid_argument, "holds f32"));
  EXPECT_THAT(
      gpu_->ask(Generate{
                    .generator = Generator::xorwow, .distribution = Distribution::normal, .count = 7, .output = small})
          .wait(),
      StatusIs(Code::invalid_argument, "even"));
  const BufferHandle freed = small;
  ASSERT_THAT(gpu_->free(freed).wait(), IsOk());
  EXPECT_THAT(gpu_->ask(Generate{.count = 4, .output = freed}).wait(), StatusIs(Code::stale_handle));
}

TEST_F(CudaRandTest, AnIsolatedDeviceMakesTheSameNumbers) {
  ACCEL_OPEN_CUDA_OR_SKIP(system_, (DeviceOptions{.kind = DeviceKind::cuda, .isolation = Isolation::worker_process}),
                          isolated);
  expect_identical<float>(isolated, {.distribution = Distribution::uniform, .dtype = DType::f32});
  expect_close<float>(isolated, {.distribution = Distribution::normal, .dtype = DType::f32});
  Result<std::vector<float>> x =
      generate<float>(isolated, {.generator = Generator::xorwow, .seed = 5, .count = 1 << 20});
  Result<std::vector<float>> y = generate<float>(*gpu_, {.generator = Generator::xorwow, .seed = 5, .count = 1 << 20});
  ASSERT_THAT(x, IsOk());
  ASSERT_THAT(y, IsOk());
  EXPECT_EQ(*x, *y);
  testing::expect_uniform(as_doubles(*x));
}

}  // namespace
}  // namespace accel::rand

// Our CPU Philox against cuRAND's own device functions (curand_kernel.h) compiled for the host: nvcc builds them
// for the CPU when QUALIFIERS says __host__, and their host branches are plain C++ (sinf, expf, logf where the
// device uses its approximations). No GPU is needed, so this checks in CI what the GPU test checks on the H100:
// that curand_init(seed, 0, offset) and curand4 draw the words our layout says, that the conversions to uniform
// numbers are the same bits, that Box-Muller pairs, log-normals and Poisson counts are made from the same words in
// the same order. The host branches' transcendental functions are not the device's, so those are compared within
// bounds (and the GPU test bounds the device's).
#define QUALIFIERS static inline __host__ __device__
#include <curand_kernel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "libs/rand/cpu_philox.hpp"

namespace accel::rand {
namespace {

template <class T>
std::vector<T> ours(OutputKind kind, std::uint64_t seed, std::uint64_t offset, std::uint64_t count, double mean = 0,
                    double stddev = 1, double lambda = 1) {
  std::vector<T> out(count);
  run_cpu_philox({.output = out.data(),
                  .count = count,
                  .seed = seed,
                  .offset = offset,
                  .kind = kind,
                  .mean = mean,
                  .stddev = stddev,
                  .lambda = lambda});
  return out;
}

const std::uint64_t kSeeds[] = {0, 1, 0x9e3779b97f4a7c15};
const std::uint64_t kOffsets[] = {0, 1, 2, 3, 5, 4097, (std::uint64_t{1} << 40) + 3};

TEST(CurandReferenceTest, CurandInitAndCurandDrawTheWordsOfOurLayout) {
  for (std::uint64_t seed : kSeeds)
    for (std::uint64_t offset : kOffsets) {
      curandStatePhilox4_32_10_t state;
      curand_init(seed, 0, offset, &state);
      const std::vector<std::uint32_t> words = ours<std::uint32_t>(OutputKind::bits, seed, offset, 64);
      for (int i = 0; i < 32; ++i) ASSERT_EQ(curand(&state), words[i]) << seed << " " << offset << " " << i;
      // curand4 goes on from wherever curand left off, mid-block or not.
      for (int i = 32; i < 64; i += 4) {
        const uint4 r = curand4(&state);
        ASSERT_EQ((std::vector<std::uint32_t>{r.x, r.y, r.z, r.w}),
                  (std::vector<std::uint32_t>(&words[i], &words[i + 4])));
      }
    }
}

TEST(CurandReferenceTest, UniformNumbersAreTheSameBits) {
  for (std::uint64_t seed : kSeeds)
    for (std::uint64_t block : {0, 1, 1000}) {
      curandStatePhilox4_32_10_t state;
      curand_init(seed, 0, 4 * block, &state);
      const std::vector<float> f = ours<float>(OutputKind::uniform_f32, seed, 4 * block, 64);
      const std::vector<double> d = ours<double>(OutputKind::uniform_f64, seed, 2 * (block + 16), 32);
      for (int i = 0; i < 64; i += 4) {
        const float4 r = curand_uniform4(&state);
        EXPECT_EQ(std::memcmp(&r, &f[i], 16), 0) << i;
      }
      for (int i = 0; i < 32; i += 2) {
        const double2 r = curand_uniform2_double(&state);
        EXPECT_EQ(r.x, d[i]);
        EXPECT_EQ(r.y, d[i + 1]);
      }
    }
}

// The host branch of _curand_box_muller rounds v = y 2pi 2^-32 + pi 2^-32 after the product (the device, and we,
// fuse them) and takes sinf and cosf; of _curand_box_muller_double, sin(v pi) and cos(v pi). Both within a
// small share of the pair's radius.
TEST(CurandReferenceTest, NormalAndLogNormalNumbersComeFromTheSameWords) {
  for (std::uint64_t seed : kSeeds) {
    curandStatePhilox4_32_10_t state;
    curand_init(seed, 0, 4 * 77, &state);
    const std::vector<float> n = ours<float>(OutputKind::normal_f32, seed, 4 * 77, 400);
    const std::vector<float> ln = ours<float>(OutputKind::log_normal_f32, seed, 4 * 177, 400, 0.5, 0.25);
    const std::vector<double> nd = ours<double>(OutputKind::normal_f64, seed, 2 * 277, 200);
    const std::vector<double> lnd = ours<double>(OutputKind::log_normal_f64, seed, 2 * 377, 200, -1, 2);
    for (int i = 0; i < 400; i += 4) {
      const float4 r = curand_normal4(&state);
      const float got[4] = {r.x, r.y, r.z, r.w};
      for (int k = 0; k < 4; ++k) {
        const double radius = std::hypot(n[i + (k & 2)], n[i + (k & 2) + 1]);
        EXPECT_NEAR(got[k], n[i + k], 1e-6 * (1 + radius)) << "normal f32 " << i + k;
      }
    }
    for (int i = 0; i < 400; i += 4) {
      const float4 r = curand_log_normal4(&state, 0.5f, 0.25f);
      const float got[4] = {r.x, r.y, r.z, r.w};
      for (int k = 0; k < 4; ++k) EXPECT_NEAR(got[k], ln[i + k], 4e-6 * ln[i + k]) << "log-normal f32 " << i + k;
    }
    for (int i = 0; i < 200; i += 2) {
      const double2 r = curand_normal2_double(&state);
      const double radius = std::hypot(nd[i], nd[i + 1]);
      EXPECT_NEAR(r.x, nd[i], 1e-14 * radius) << "normal f64 " << i;
      EXPECT_NEAR(r.y, nd[i + 1], 1e-14 * radius) << "normal f64 " << i + 1;
    }
    for (int i = 0; i < 200; i += 2) {
      const double2 r = curand_log_normal2_double(&state, -1.0, 2.0);
      EXPECT_NEAR(r.x, lnd[i], 1e-13 * lnd[i]) << "log-normal f64 " << i;
      EXPECT_NEAR(r.y, lnd[i + 1], 1e-13 * lnd[i + 1]) << "log-normal f64 " << i + 1;
    }
  }
}

// Element e of a Poisson stream is curand_poisson of curand_init(seed, e, 0). The host branch's functions are
// exact, as ours are, but where the device's structure differs from the host branch's (its exp is ex2 of a
// product in double), ours follows the device's, so a count may differ now and then.
TEST(CurandReferenceTest, PoissonCountsDrawTheSameWords) {
  for (double lambda : {0.5, 10.0, 63.9, 64.0, 100.0, 1000.0, 4000.0, 4000.5, 1e5}) {
    const std::uint64_t count = 20000, offset = 12345;
    const std::vector<std::uint32_t> mine = ours<std::uint32_t>(OutputKind::poisson, 3, offset, count, 0, 1, lambda);
    std::uint64_t differ = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
      curandStatePhilox4_32_10_t state;
      curand_init(3, offset + i, 0, &state);
      differ += curand_poisson(&state, lambda) != mine[i];
    }
    std::cout << "poisson(" << lambda << "): " << differ << " of " << count << " differ from cuRAND's host branch\n";
    EXPECT_LE(differ, count / 500) << "lambda " << lambda;
  }
}

}  // namespace
}  // namespace accel::rand

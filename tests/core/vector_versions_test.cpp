// Each copy of a vector body that this CPU runs gives the baseline copy's bits, the level chosen is one this CPU
// runs (a copy for a level it lacks dies of SIGILL here, as Clang 14's target_clones did on an AVX2 machine), and the
// arguments reach the body as they were passed, references included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/vector_versions.hpp"

namespace accel::detail {
namespace {

ACCEL_VECTOR_BODY float fused_sum(float alpha, const float* x, float* y, std::int64_t n) {
  float total = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    y[k] = std::fma(alpha, x[k], y[k]);
    total += y[k];
  }
  return total;
}

ACCEL_VECTOR_BODY void count_into(int& calls, std::vector<int>& seen, int value) {
  ++calls;
  seen.push_back(value);
}

std::vector<CpuVectorLevel> levels_this_cpu_runs() {
  switch (cpu_vector_level()) {
    case CpuVectorLevel::avx512: return {CpuVectorLevel::avx512, CpuVectorLevel::avx2, CpuVectorLevel::baseline};
    case CpuVectorLevel::avx2: return {CpuVectorLevel::avx2, CpuVectorLevel::baseline};
    case CpuVectorLevel::baseline: break;
  }
  return {CpuVectorLevel::baseline};
}

TEST(VectorVersionsTest, EveryCopyThisCpuRunsGivesTheBaselinesBits) {
  std::mt19937 random(7);
  std::normal_distribution<float> normal;
  for (const std::int64_t n : {0, 1, 7, 16, 37, 1000, 4099}) {
    std::vector<float> x(static_cast<std::size_t>(n)), y0(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = normal(random), y0[i] = normal(random);
    std::vector<float> expected = y0;
    const float expected_total =
        at_vector_level<fused_sum>(CpuVectorLevel::baseline, 0.7f, x.data(), expected.data(), n);
    for (const CpuVectorLevel level : levels_this_cpu_runs()) {
      std::vector<float> y = y0;
      const float total = at_vector_level<fused_sum>(level, 0.7f, x.data(), y.data(), n);
      EXPECT_EQ(y, expected) << name_of(level) << ", n = " << n;
      EXPECT_EQ(total, expected_total) << name_of(level) << ", n = " << n;
    }
  }
}

TEST(VectorVersionsTest, TheLevelChosenIsTheWidestThisCpuReports) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl");
  EXPECT_EQ(cpu_vector_level(), avx512 ? CpuVectorLevel::avx512
                                : avx2 ? CpuVectorLevel::avx2
                                       : CpuVectorLevel::baseline);
#else
  EXPECT_EQ(cpu_vector_level(), CpuVectorLevel::baseline);
#endif
  EXPECT_STREQ(name_of(CpuVectorLevel::avx2), "avx2");
}

TEST(VectorVersionsTest, ArgumentsReachTheBodyAsPassedReferencesIncluded) {
  int calls = 0;
  std::vector<int> seen;
  for (const CpuVectorLevel level : levels_this_cpu_runs()) at_vector_level<count_into>(level, calls, seen, 3);
  at_cpu_vector_width<count_into>(calls, seen, 4);
  EXPECT_EQ(calls, static_cast<int>(levels_this_cpu_runs().size()) + 1);
  EXPECT_EQ(seen.back(), 4);
  EXPECT_EQ(seen.size(), levels_this_cpu_runs().size() + 1);
}

}  // namespace
}  // namespace accel::detail

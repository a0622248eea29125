// OpenBLAS's kernels are chosen again only where Debian's OpenBLAS fell back to SSE3 on a CPU it does not know, and
// the core it runs in this process is never that fallback on a CPU with AVX2 and FMA.
#include <gtest/gtest.h>

#include <cstdlib>

#include "libs/blas/openblas_kernels.hpp"

namespace accel::blas {
namespace {

TEST(OpenBlasKernels, ChosenAgainOnlyAfterTheFallbackAndByWhatTheCpuRuns) {
  EXPECT_EQ(openblas_core_to_force("Prescott", detail::CpuVectorLevel::avx512), "SkylakeX");
  EXPECT_EQ(openblas_core_to_force("Prescott", detail::CpuVectorLevel::avx2), "Haswell");
  EXPECT_EQ(openblas_core_to_force("Prescott", detail::CpuVectorLevel::baseline), "");
  EXPECT_EQ(openblas_core_to_force("Zen", detail::CpuVectorLevel::avx2), "");
  EXPECT_EQ(openblas_core_to_force("SkylakeX", detail::CpuVectorLevel::avx512), "");
}

TEST(OpenBlasKernels, ThisProcessRunsVectorKernelsWhereTheCpuHasThem) {
  __builtin_cpu_init();
  const std::string core = ensure_openblas_kernels();
  EXPECT_FALSE(core.empty());
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !std::getenv("OPENBLAS_CORETYPE")) {
    EXPECT_NE(core, "Prescott");
  }
}

}  // namespace
}  // namespace accel::blas

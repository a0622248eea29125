#include "core/vector_versions.hpp"

namespace accel::detail {
namespace {

CpuVectorLevel detect() noexcept {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
    return CpuVectorLevel::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuVectorLevel::avx2;
#endif
  return CpuVectorLevel::baseline;
}

}  // namespace

CpuVectorLevel cpu_vector_level() noexcept {
  static const CpuVectorLevel level = detect();
  return level;
}

const char* name_of(CpuVectorLevel level) noexcept {
  switch (level) {
    case CpuVectorLevel::avx512: return "avx512";
    case CpuVectorLevel::avx2: return "avx2";
    case CpuVectorLevel::baseline: break;
  }
  return "baseline";
}

}  // namespace accel::detail

// A CPU loop compiled three times, for AVX-512, AVX2 with FMA and the x86-64 baseline, and the copy for this CPU
// chosen at each call by a level detected once: its loops vectorize at each copy's width, and std::fma becomes one
// instruction where the CPU has FMA.
//
//   namespace {
//   ACCEL_VECTOR_BODY void scale_body(float a, float* x, std::int64_t n) { for (...) x[k] *= a; }
//   }
//   void scale(float a, float* x, std::int64_t n) { at_cpu_vector_width<scale_body>(a, x, n); }
//
// The body is always inlined into a copy marked with `target`, which every GCC and Clang compiles as asked. Not the
// compilers' `target_clones`: Clang 14 drops it from a function declared before without it (every kernel, declared in
// its header) and compiled the one copy for AVX-512 whatever the CPU, which died of SIGILL on an AVX2 machine; and
// its copy is chosen by an ifunc resolver, which runs before ThreadSanitizer's runtime exists and crashes it.
#pragma once

#include <utility>

namespace accel::detail {

enum class CpuVectorLevel { avx512, avx2, baseline };

// AVX-512 F, CD, BW, DQ and VL with FMA (x86-64-v4's vectors); AVX2 with FMA (x86-64-v3's); or neither: the features
// each copy is compiled for, detected on first use.
CpuVectorLevel cpu_vector_level() noexcept;
const char* name_of(CpuVectorLevel level) noexcept;

#define ACCEL_VECTOR_BODY [[gnu::always_inline]] inline

template <auto Body>
struct VectorVersions {
#if defined(__x86_64__)
  template <class... Args>
  __attribute__((target("avx512f,avx512cd,avx512bw,avx512dq,avx512vl,avx2,fma"))) static decltype(auto) avx512(
      Args&&... args) {
    return Body(std::forward<Args>(args)...);
  }
  template <class... Args>
  __attribute__((target("avx2,fma"))) static decltype(auto) avx2(Args&&... args) {
    return Body(std::forward<Args>(args)...);
  }
#endif
  template <class... Args>
  static decltype(auto) baseline(Args&&... args) {
    return Body(std::forward<Args>(args)...);
  }
};

// Body's copy for `level`, which the caller knows this CPU runs (tests compare the copies).
template <auto Body, class... Args>
decltype(auto) at_vector_level(CpuVectorLevel level, Args&&... args) {
#if defined(__x86_64__)
  switch (level) {
    case CpuVectorLevel::avx512: return VectorVersions<Body>::avx512(std::forward<Args>(args)...);
    case CpuVectorLevel::avx2: return VectorVersions<Body>::avx2(std::forward<Args>(args)...);
    case CpuVectorLevel::baseline: break;
  }
#else
  (void)level;
#endif
  return VectorVersions<Body>::baseline(std::forward<Args>(args)...);
}

template <auto Body, class... Args>
decltype(auto) at_cpu_vector_width(Args&&... args) {
  return at_vector_level<Body>(cpu_vector_level(), std::forward<Args>(args)...);
}

}  // namespace accel::detail

// Elementwise functions over float arrays at the widest vector width this CPU has, chosen once at run time:
// glibc's vector math library (libmvec: erf, exp, tanh, log1p in 16 or 8 lanes, within 4 ulp) under AVX-512 or
// AVX2, the scalar libm functions elsewhere. The graph's activations and softmax are where the CPU path spends
// its time outside the GEMMs, and a scalar erf per element cost more than the attention's arithmetic.
#pragma once

#include <cstdint>

#include "graph/kernels/op_kinds.hpp"

// A kernel compiled three times, for AVX-512, AVX2 with FMA and the x86-64 baseline, the copy chosen when the
// program loads (GCC's and Clang's function multi-versioning); its `omp simd` loops take each copy's width. Not
// under ThreadSanitizer: the copy is chosen by a resolver that runs while the loader relocates, before TSan's
// runtime exists, and TSan's instrumentation of it crashes the program at start.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ACCEL_NO_VECTOR_CLONES
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define ACCEL_NO_VECTOR_CLONES
#endif
#if defined(__x86_64__) && !defined(ACCEL_NO_VECTOR_CLONES)
#define ACCEL_CPU_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ACCEL_CPU_VECTOR_CLONES
#endif

namespace accel::graph::cpu {

// y[i] = exp(x[i] - shift); returns the sum of the y[i]. x and y may be the same array.
float exp_shifted_sum(const float* x, float shift, std::int64_t count, float* y);

// x[i] = act(x[i] + bias[i]) for one row (bias may be null): accel::activate's definitions in float.
void bias_activate_row(float* x, const float* bias, std::int64_t count, Activation activation);

// The vector width the functions above run at: "avx512", "avx2" or "scalar" (for benchmarks' records).
const char* vector_math_level();

}  // namespace accel::graph::cpu

// Elementwise functions over float arrays at the widest vector width this CPU has, chosen once at run time:
// glibc's vector math library (libmvec: erf, exp, tanh, log1p in 16 or 8 lanes, within 4 ulp) under AVX-512 or
// AVX2, the scalar libm functions elsewhere. The graph's activations and softmax are where the CPU path spends
// its time outside the GEMMs, and a scalar erf per element cost more than the attention's arithmetic.
#pragma once

#include <cstdint>

#include "core/vector_clones.hpp"  // ACCEL_CPU_VECTOR_CLONES, with which the kernels here are compiled
#include "graph/kernels/op_kinds.hpp"

namespace accel::graph::cpu {

// y[i] = exp(x[i] - shift); returns the sum of the y[i]. x and y may be the same array.
float exp_shifted_sum(const float* x, float shift, std::int64_t count, float* y);

// x[i] = act(x[i] + bias[i]) for one row (bias may be null): accel::activate's definitions in float.
void bias_activate_row(float* x, const float* bias, std::int64_t count, Activation activation);

// The vector width the functions above run at: "avx512", "avx2" or "scalar" (for benchmarks' records).
const char* vector_math_level();

}  // namespace accel::graph::cpu

// Elementwise functions over float arrays at the widest vector width this CPU has, chosen once at run time:
// glibc's vector math library (libmvec: erf, exp, tanh, log1p in 16 or 8 lanes, within 4 ulp) under AVX-512 or
// AVX2, the scalar libm functions elsewhere. The graph's activations and softmax are where the CPU path spends
// its time outside the GEMMs, and a scalar erf per element cost more than the attention's arithmetic.
#pragma once

#include <cstdint>

#include "graph/kernels/op_kinds.hpp"

namespace accel::graph::cpu {

// A softmax's numerators in place: x[i] = exp(scale (x[i] - m)), m the largest x[i] where scale >= 0 and the smallest
// where it is negative, so that no term passes 1; returns their sum (0 for no terms).
float softmax_numerators(float* x, std::int64_t count, float scale);

// x[i] = act(x[i] + bias[i]) for one row (bias may be null): accel::activate's definitions in float.
void bias_activate_row(float* x, const float* bias, std::int64_t count, Activation activation);

}  // namespace accel::graph::cpu

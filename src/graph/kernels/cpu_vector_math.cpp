#include "graph/kernels/cpu_vector_math.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/vector_versions.hpp"

// libmvec's entry points, named by the x86-64 vector function ABI: 'e' AVX-512 with 16 lanes, 'd' AVX2 with 8.
extern "C" {
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_erff(__m512);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_expf(__m512);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_tanhf(__m512);
__attribute__((target("avx512f"))) __m512 _ZGVeN16v_log1pf(__m512);
__attribute__((target("avx2"))) __m256 _ZGVdN8v_erff(__m256);
__attribute__((target("avx2"))) __m256 _ZGVdN8v_expf(__m256);
__attribute__((target("avx2"))) __m256 _ZGVdN8v_tanhf(__m256);
__attribute__((target("avx2"))) __m256 _ZGVdN8v_log1pf(__m256);
}

namespace accel::graph::cpu {
namespace {

// y[i] = f(x[i]) over one chunk; x and y may be the same array.
using Map = void (*)(const float* x, float* y, std::int64_t count);

enum class Function { erf, exp, tanh, log1p };

float scalar(Function f, float x) {
  switch (f) {
    case Function::erf: return std::erf(x);
    case Function::exp: return std::exp(x);
    case Function::tanh: return std::tanh(x);
    case Function::log1p: return std::log1p(x);
  }
  return x;
}

template <Function F>
void map_scalar(const float* x, float* y, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) y[i] = scalar(F, x[i]);
}

template <Function F>
__attribute__((target("avx512f"))) void map_avx512(const float* x, float* y, std::int64_t count) {
  constexpr auto vector = F == Function::erf    ? _ZGVeN16v_erff
                          : F == Function::exp  ? _ZGVeN16v_expf
                          : F == Function::tanh ? _ZGVeN16v_tanhf
                                                : _ZGVeN16v_log1pf;
  std::int64_t i = 0;
  for (; i + 16 <= count; i += 16) _mm512_storeu_ps(y + i, vector(_mm512_loadu_ps(x + i)));
  if (i == count) return;
  // The tail as one masked vector (its idle lanes zeros): a row of 76 scores otherwise took 12 scalar calls.
  const __mmask16 tail = static_cast<__mmask16>((1u << (count - i)) - 1);
  _mm512_mask_storeu_ps(y + i, tail, vector(_mm512_maskz_loadu_ps(tail, x + i)));
}

template <Function F>
__attribute__((target("avx2"))) void map_avx2(const float* x, float* y, std::int64_t count) {
  constexpr auto vector = F == Function::erf    ? _ZGVdN8v_erff
                          : F == Function::exp  ? _ZGVdN8v_expf
                          : F == Function::tanh ? _ZGVdN8v_tanhf
                                                : _ZGVdN8v_log1pf;
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) _mm256_storeu_ps(y + i, vector(_mm256_loadu_ps(x + i)));
  if (i == count) return;
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count - i)), lanes);
  _mm256_maskstore_ps(y + i, tail, vector(_mm256_maskload_ps(x + i, tail)));
}

template <Function F>
Map map_for_cpu() {
  switch (detail::cpu_vector_level()) {
    case detail::CpuVectorLevel::avx512: return map_avx512<F>;
    case detail::CpuVectorLevel::avx2: return map_avx2<F>;
    case detail::CpuVectorLevel::baseline: break;
  }
  return map_scalar<F>;
}

const Map kErf = map_for_cpu<Function::erf>();
const Map kExp = map_for_cpu<Function::exp>();
const Map kTanh = map_for_cpu<Function::tanh>();
const Map kLog1p = map_for_cpu<Function::log1p>();

// Chunks small enough that the scratch stays in L1 between the passes over it.
constexpr std::int64_t kChunk = 256;

// One chunk of x (x + bias already applied) through the activation, with t as scratch.
void activate_chunk(float* x, float* t, std::int64_t n, Activation activation) {
  switch (activation) {
    case Activation::identity: return;
    case Activation::relu:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.0f);
      return;
    case Activation::gelu_erf:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) t[i] = x[i] * 0.70710678118654752f;
      kErf(t, t, n);
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + t[i]);
      return;
    case Activation::gelu_tanh:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) t[i] = 0.79788456080286536f * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
      kTanh(t, t, n);
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + t[i]);
      return;
    case Activation::silu:
    case Activation::sigmoid:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) t[i] = -x[i];
      kExp(t, t, n);
      if (activation == Activation::silu) {
#pragma omp simd
        for (std::int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + t[i]);
      } else {
#pragma omp simd
        for (std::int64_t i = 0; i < n; ++i) x[i] = 1.0f / (1.0f + t[i]);
      }
      return;
    case Activation::tanh: kTanh(x, x, n); return;
    case Activation::log1p_relu:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.0f);
      kLog1p(x, x, n);
      return;
  }
}

// The bounds pass is a vector reduction at the copy's width: a scalar max over each row of scores was half of the
// attention's time outside its products (PERFORMANCE.md §98).
ACCEL_VECTOR_BODY float softmax_numerators_body(float* x, std::int64_t count, float scale) {
  if (count <= 0) return 0;
  // In 16-float vectors: GCC leaves a float max or min reduction scalar without -ffast-math, even under omp simd.
  using Floats16 = float __attribute__((vector_size(64)));
  Floats16 high, low;
  for (int lane = 0; lane < 16; ++lane) high[lane] = low[lane] = x[0];
  std::int64_t i = 0;
  for (; i + 16 <= count; i += 16) {
    Floats16 v;
    std::memcpy(&v, x + i, sizeof v);
    high = v > high ? v : high;
    low = v < low ? v : low;
  }
  float highest = x[0], lowest = x[0];
  for (int lane = 0; lane < 16; ++lane) {
    highest = std::max(highest, high[lane]);
    lowest = std::min(lowest, low[lane]);
  }
  for (; i < count; ++i) {
    highest = std::max(highest, x[i]);
    lowest = std::min(lowest, x[i]);
  }
  const float shift = scale >= 0 ? highest : lowest;
  float total = 0;
  for (std::int64_t begin = 0; begin < count; begin += kChunk) {
    const std::int64_t n = std::min(kChunk, count - begin);
    float* chunk = x + begin;
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) chunk[i] = (chunk[i] - shift) * scale;
    kExp(chunk, chunk, n);
#pragma omp simd reduction(+ : total)
    for (std::int64_t i = 0; i < n; ++i) total += chunk[i];
  }
  return total;
}

}  // namespace

float softmax_numerators(float* x, std::int64_t count, float scale) {
  return detail::at_cpu_vector_width<softmax_numerators_body>(x, count, scale);
}

void bias_activate_row(float* x, const float* bias, std::int64_t count, Activation activation) {
  float scratch[kChunk];
  for (std::int64_t begin = 0; begin < count; begin += kChunk) {
    const std::int64_t n = std::min(kChunk, count - begin);
    float* chunk = x + begin;
    if (bias) {
      const float* b = bias + begin;
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) chunk[i] += b[i];
    }
    activate_chunk(chunk, scratch, n, activation);
  }
}

}  // namespace accel::graph::cpu

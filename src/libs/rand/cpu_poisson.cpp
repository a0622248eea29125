// curand_poisson for a Philox state (curand_poisson.h), on the host. Three methods by lambda, as cuRAND's:
//   lambda < 64           Knuth: multiply uniforms into e^lambda until the product is at most 1. The device's
//                         expf goes through ex2.approx (within 2 ulp), ours is exact, so where they differ a
//                         product lands on the other side of 1 now and then: about one element in a million;
//   lambda > 4000         the normal approximation, round(sqrt(lambda) n + lambda) with n from
//                         curand_normal_double: equal but where the sum is within ulps of a half;
//   otherwise             rejection from an approximation of the incomplete gamma function, in which cuRAND uses
//                         the hardware's rsqrt, lg2, ex2 and rcp approximations; ours are exact, so floor(x) or
//                         an acceptance comes out otherwise for about one element in a thousand at lambda = 1000
//                         (the GPU test measures the share, see tests/libs/rand/cuda_rand_test.cpp).
// Where nvcc 13 fuses a multiply and an add in those headers, so do we; where it keeps them apart, so do we.
#include <cmath>
#include <limits>

#include "libs/rand/cpu_philox.hpp"
#include "libs/rand/philox.hpp"
#include "libs/rand/philox_transforms.hpp"

namespace accel::rand {
namespace {

// The approximations of curand_poisson.h's __cr_* functions, computed exactly. __cr_exp and __cr_log scale by
// log2(e) and ln(2) in double, as the header's double constants make them.
float cr_rsqrt(float a) { return 1.0f / std::sqrt(a); }
float cr_exp(float a) { return std::exp2(static_cast<float>(a * 1.4426950408889634074)); }
float cr_log(float a) { return static_cast<float>(std::log2(a) * 0.69314718055994530942); }
float cr_rcp(float a) { return 1.0f / a; }

// The two constants of __cr_pgammainc and __cr_pgammaincinv that depend on lambda only.
struct GammaShape {
  float alpha;
  float beta;
};

GammaShape gamma_shape(float a) {
  return {std::fmaf(1.43248035075540910f, cr_rsqrt(a - 0.12400979329415655f), 0.00025361074907033f),
          std::fmaf(0.21096734870196546f, cr_rsqrt(a - 1.97381164089999420f), 0.94201734077887530f)};
}

// Regularized incomplete gamma function P(a, x), approximated.
float pgammainc(float a, float x, GammaShape g) {
  float t = a - x;
  t = g.alpha * t - g.beta;
  t = 1.0f + cr_exp(t);
  t = t * t;
  return cr_rcp(t);
}

// Its inverse in x.
float pgammaincinv(float a, float y, GammaShape g) {
  float t = cr_rsqrt(y) - 1.0f;
  t = cr_log(t);
  t = g.beta + t;
  return a - t * cr_rcp(g.alpha);
}

// The device's float-to-integer conversions (cvt.rzi) saturate, and NaN becomes 0; C++'s are undefined there. The
// rejection loop meets infinities when a uniform is exactly 1.
template <class Int>
Int saturate_to(float x) {
  if (std::isnan(x)) return 0;
  if (x <= static_cast<float>(std::numeric_limits<Int>::min())) return std::numeric_limits<Int>::min();
  if (x >= static_cast<float>(std::numeric_limits<Int>::max())) return std::numeric_limits<Int>::max();
  return static_cast<Int>(x);
}

// ln((a - 1)!) for a >= 1: a table to 8, Stirling's series (Hart et al., approximation 5404) above. Below 1 (a draw
// that the rejection turns down) the device reads its table at |a| - 1, outside it for 0 and below -9, where we
// take the table's last entry as the header's host branch does.
double lgamma_integer(int a) {
  static constexpr double kTable[] = {0.0,
                                      0.0,
                                      6.931471805599453094e-1,
                                      1.791759469228055001e0,
                                      3.178053830347945620e0,
                                      4.787491742782045994e0,
                                      6.579251212010100995e0,
                                      8.525161361065414300e0,
                                      1.060460290274525023e1};
  const double fa = std::fabs(static_cast<float>(a));
  if (a < 1) return a < 0 && a >= -9 ? kTable[-a - 1] : kTable[8];
  if (a <= 8) return kTable[a - 1];
  double s = 1.0 / fa;
  const double t = s * s;
  double sum = -0.1633436431e-2;
  sum = std::fma(sum, t, 0.83645878922e-3);
  sum = std::fma(sum, t, -0.5951896861197e-3);
  sum = std::fma(sum, t, 0.793650576493454e-3);
  sum = std::fma(sum, t, -0.277777777735865004e-2);
  sum = std::fma(sum, t, 0.833333333333331018375e-1);
  sum = std::fma(sum, s, 0.918938533204672);
  s = 0.5 * std::log(fa);
  s = s * (fa - 0.5);
  return (s - fa) + (s + sum);
}

std::uint32_t knuth(PhiloxWords& words, float lambda) {
  std::uint32_t k = 0;
  float p = static_cast<float>(std::exp(static_cast<double>(lambda)));
  do {
    ++k;
    p *= uniform_f32(words.next());
  } while (p > 1.0f);
  return k - 1;
}

std::uint32_t gammainc_rejection(PhiloxWords& words, float lambda) {
  const float log_lambda = cr_log(lambda);
  const GammaShape g = gamma_shape(lambda);
  while (true) {
    const float y = uniform_f32(words.next());
    const float x = std::floor(pgammaincinv(lambda, y, g));
    float z = uniform_f32(words.next());
    const float v = (pgammainc(lambda, x + 1.0f, g) - pgammainc(lambda, x, g)) * 1.3f;
    z = z * v;
    const float t = cr_exp(x * log_lambda - lambda - static_cast<float>(lgamma_integer(saturate_to<int>(1.0f + x))));
    if (z < t && v >= 1e-20) return saturate_to<std::uint32_t>(x);
  }
}

}  // namespace

std::uint32_t poisson_element(std::uint64_t seed, std::uint64_t element, double lambda) {
  PhiloxWords words(seed, element);
  if (lambda < 64) return knuth(words, static_cast<float>(lambda));
  if (lambda > 4000) {
    const PhiloxBlock w = words.next4();
    const double n = box_muller_f64(w[0], w[1], w[2], w[3])[0];
    return static_cast<std::uint32_t>(std::fma(std::sqrt(lambda), n, lambda) + 0.5);
  }
  return gammainc_rejection(words, static_cast<float>(lambda));
}

}  // namespace accel::rand

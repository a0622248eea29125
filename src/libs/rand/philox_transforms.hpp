// The arithmetic of cuRAND's Philox device functions (curand_uniform.h, curand_normal.h), on the host: what
// element e of a stream becomes once its words are drawn. Where nvcc fuses a multiply and an add (it does by
// default, and cuRAND's headers are compiled into our kernel), we call fma, so that the rounding is the device's.
//
// Exact: the conversions to (0, 1] (one word to f32, two to f64). Not exact: the device's logf and expf are within
// an ulp or two of ours, and __sincosf is the hardware's approximation (absolute error about 2^-21.4), so an f32
// normal differs from the GPU's by up to about 2^-21 of its pair's radius sqrt(-2 ln u). The f64 functions
// (log, sincospi, exp) are all within a few ulp on both.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "libs/rand/philox_layout.hpp"

namespace accel::rand {

// curand_uniform: a word to (0, 1] (2^-32 x + 2^-33, x converted to float first, rounding to nearest).
[[nodiscard]] inline float uniform_f32(std::uint32_t x) noexcept {
  return std::fmaf(static_cast<float>(x), kTwoPow32Inv, kTwoPow32Inv / 2.0f);
}

// _curand_uniform_double_hq: two words to a 53-bit fraction in (0, 1).
[[nodiscard]] inline double uniform_f64(std::uint32_t x, std::uint32_t y) noexcept {
  const std::uint64_t z = std::uint64_t{x} ^ (std::uint64_t{y} << 21);
  return std::fma(static_cast<double>(z), kTwoPow53Inv, kTwoPow53Inv / 2.0);
}

// sin(pi v) and cos(pi v) with v reduced exactly to a quarter turn first, as sincospi does: v = k / 2 + r,
// |r| <= 1/4, then the quadrant k picks and signs the two. `0.0 - x` rather than `-x` keeps zeros positive.
[[nodiscard]] inline std::array<double, 2> sincospi(double v) noexcept {
  const double k = std::nearbyint(2.0 * v);
  const double r = v - 0.5 * k;
  const double s = std::sin(std::numbers::pi * r), c = std::cos(std::numbers::pi * r);
  switch (static_cast<std::int64_t>(k) & 3) {
    case 0: return {s, c};
    case 1: return {c, 0.0 - s};
    case 2: return {0.0 - s, 0.0 - c};
    default: return {0.0 - c, s};
  }
}

// _curand_box_muller: words x and y to the pair (sin, cos) of radius sqrt(-2 ln u), u from x, angle 2 pi from y.
[[nodiscard]] inline std::array<float, 2> box_muller_f32(std::uint32_t x, std::uint32_t y) noexcept {
  const float u = uniform_f32(x);
  const float v = std::fmaf(static_cast<float>(y), kTwoPow32Inv2Pi, kTwoPow32Inv2Pi / 2.0f);
  const float s = std::sqrt(-2.0f * std::log(u));
  const double angle = v;
  return {static_cast<float>(std::sin(angle)) * s, static_cast<float>(std::cos(angle)) * s};
}

// _curand_box_muller_double: words (x0, x1) to u, (y0, y1) to the angle in half turns, in (0, 2].
[[nodiscard]] inline std::array<double, 2> box_muller_f64(std::uint32_t x0, std::uint32_t x1, std::uint32_t y0,
                                                          std::uint32_t y1) noexcept {
  const double u = uniform_f64(x0, x1);
  const std::uint64_t zy = std::uint64_t{y0} ^ (std::uint64_t{y1} << 21);
  const double v = std::fma(static_cast<double>(zy), kTwoPow53Inv * 2.0, kTwoPow53Inv);
  const double s = std::sqrt(-2.0 * std::log(u));
  const std::array<double, 2> sc = sincospi(v);
  return {sc[0] * s, sc[1] * s};
}

}  // namespace accel::rand

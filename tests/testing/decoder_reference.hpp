// Naive double-precision references of the decoder ops (graph kernel tests, CPU and CUDA): packed attention with
// grouped-query heads and an optional causal mask, and the rotary position embedding.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace accel::graph::testing {

// q [rows, heads * d], k and v [rows, kv_heads * d], each with its own row stride; padding rows of the result hold
// `fill`. Query head h reads key/value head h / (heads / kv_heads).
inline std::vector<double> attention_reference(const float* q, std::int64_t q_stride, const float* k, const float* v,
                                               std::int64_t kv_stride, const std::vector<std::int32_t>& offsets,
                                               int heads, int kv_heads, int d, double scale, bool causal,
                                               std::int64_t rows, double fill, int window = 0) {
  const std::int64_t width = std::int64_t{heads} * d;
  std::vector<double> out(static_cast<std::size_t>(rows * width), fill);
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::int64_t begin = offsets[s], length = offsets[s + 1] - offsets[s];
    for (int h = 0; h < heads; ++h) {
      const std::int64_t kv = std::int64_t{h / (heads / kv_heads)} * d;
      for (std::int64_t i = 0; i < length; ++i) {
        // Keys [first, keys): up to the query when causal, within the window of it when one is given.
        const std::int64_t keys = std::min(causal ? i + 1 : length, window > 0 ? i + window + 1 : length);
        const std::int64_t first = window > 0 ? std::max<std::int64_t>(0, i - window) : 0;
        std::vector<double> p(static_cast<std::size_t>(keys), 0.0);
        double highest = -INFINITY, total = 0;
        for (std::int64_t j = first; j < keys; ++j) {
          double dot = 0;
          for (int c = 0; c < d; ++c)
            dot += double{q[(begin + i) * q_stride + h * d + c]} * k[(begin + j) * kv_stride + kv + c];
          p[j] = dot * scale;
          highest = std::max(highest, p[j]);
        }
        for (std::int64_t j = first; j < keys; ++j) total += p[j] = std::exp(p[j] - highest);
        for (int c = 0; c < d; ++c) {
          double o = 0;
          for (std::int64_t j = first; j < keys; ++j) o += p[j] / total * v[(begin + j) * kv_stride + kv + c];
          out[(begin + i) * width + h * d + c] = o;
        }
      }
    }
  }
  return out;
}

// x [rows, heads * d] rotated per head at `positions`, in double (frequencies 1 / theta^(2i / d)).
inline std::vector<double> rope_reference(const std::vector<float>& x, const std::vector<std::int32_t>& positions,
                                          int heads, int d, double theta) {
  const std::int64_t width = std::int64_t{heads} * d, half = d / 2;
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < positions.size(); ++r)
    for (int h = 0; h < heads; ++h)
      for (std::int64_t i = 0; i < half; ++i) {
        const double angle = positions[r] / std::pow(theta, 2.0 * static_cast<double>(i) / d);
        const std::size_t a = r * width + h * d + i, b = a + half;
        y[a] = x[a] * std::cos(angle) - x[b] * std::sin(angle);
        y[b] = x[b] * std::cos(angle) + x[a] * std::sin(angle);
      }
  return y;
}

}  // namespace accel::graph::testing

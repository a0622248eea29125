// rope on the CPU: each row's angles computed once (as transformers computes them, in float) and applied to every
// head of the row, each normalised first where a norm is given; rows are split over the process's OpenMP team when
// there are enough of them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"

namespace accel::graph::cpu {

void rope(const float* x, const std::int32_t* positions, std::int64_t rows, const RopeHeads& shape, float theta,
          float* y) {
  const int head_dim = shape.head_dim, half = head_dim / 2;
  const int rotated = shape.heads + shape.kv_heads;  // q's heads, then k's; v's (packed) after them
  std::vector<float> inverse(static_cast<std::size_t>(half));
  for (int i = 0; i < half; ++i)
    inverse[static_cast<std::size_t>(i)] =
        1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(head_dim));
  const std::int64_t width = shape.width();
#pragma omp parallel if (rows * width >= (1 << 16))
  {
    std::vector<float> cosine(static_cast<std::size_t>(half)), sine(static_cast<std::size_t>(half));
    std::vector<float> normed(static_cast<std::size_t>(head_dim));
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto position = static_cast<float>(positions[r]);
      for (int i = 0; i < half; ++i) {
        const float angle = position * inverse[static_cast<std::size_t>(i)];
        cosine[static_cast<std::size_t>(i)] = std::cos(angle);
        sine[static_cast<std::size_t>(i)] = std::sin(angle);
      }
      for (int h = 0; h < rotated; ++h) {
        const float* in = x + r * width + std::int64_t{h} * head_dim;
        float* out = y + r * width + std::int64_t{h} * head_dim;
        if (const float* gamma = h < shape.heads ? shape.query_norm : shape.key_norm; gamma != nullptr) {
          float squares = 0;
#pragma omp simd reduction(+ : squares)
          for (int c = 0; c < head_dim; ++c) squares += in[c] * in[c];
          const float scale = 1.0f / std::sqrt(squares / static_cast<float>(head_dim) + shape.eps);
#pragma omp simd
          for (int c = 0; c < head_dim; ++c) normed[static_cast<std::size_t>(c)] = in[c] * scale * gamma[c];
          in = normed.data();
        }
#pragma omp simd
        for (int i = 0; i < half; ++i) {
          const float a = in[i], b = in[i + half];
          out[i] = a * cosine[static_cast<std::size_t>(i)] - b * sine[static_cast<std::size_t>(i)];
          out[i + half] = b * cosine[static_cast<std::size_t>(i)] + a * sine[static_cast<std::size_t>(i)];
        }
      }
      const std::int64_t copied = std::int64_t{rotated} * head_dim;
      if (copied < width && x != y) std::copy(x + r * width + copied, x + (r + 1) * width, y + r * width + copied);
    }
  }
}

}  // namespace accel::graph::cpu

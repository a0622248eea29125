// rope on the CPU: each row's angles computed once (as transformers computes them, in float) and applied to every
// head of the row; rows are split over the process's OpenMP team when there are enough of them.
#include <cmath>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"

namespace accel::graph::cpu {

void rope(const float* x, const std::int32_t* positions, std::int64_t rows, int heads, int head_dim, float theta,
          float* y) {
  const int half = head_dim / 2;
  std::vector<float> inverse(static_cast<std::size_t>(half));
  for (int i = 0; i < half; ++i)
    inverse[static_cast<std::size_t>(i)] =
        1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(head_dim));
  const std::int64_t width = std::int64_t{heads} * head_dim;
#pragma omp parallel if (rows * width >= (1 << 16))
  {
    std::vector<float> cosine(static_cast<std::size_t>(half)), sine(static_cast<std::size_t>(half));
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto position = static_cast<float>(positions[r]);
      for (int i = 0; i < half; ++i) {
        const float angle = position * inverse[static_cast<std::size_t>(i)];
        cosine[static_cast<std::size_t>(i)] = std::cos(angle);
        sine[static_cast<std::size_t>(i)] = std::sin(angle);
      }
      for (int h = 0; h < heads; ++h) {
        const float* in = x + r * width + std::int64_t{h} * head_dim;
        float* out = y + r * width + std::int64_t{h} * head_dim;
#pragma omp simd
        for (int i = 0; i < half; ++i) {
          const float a = in[i], b = in[i + half];
          out[i] = a * cosine[static_cast<std::size_t>(i)] - b * sine[static_cast<std::size_t>(i)];
          out[i + half] = b * cosine[static_cast<std::size_t>(i)] + a * sine[static_cast<std::size_t>(i)];
        }
      }
    }
  }
}

}  // namespace accel::graph::cpu

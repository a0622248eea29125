// packed_attention on the CPU: one task per (sequence, head) on the process's OpenMP team, each two small products
// read in place (scores = Q K^T, then O = P V) around a vectorised softmax. A sequence's scores are at most
// max_length^2 floats, so they stay in the thread's cache.
#include <algorithm>
#include <cmath>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cpu_small_products.hpp"
#include "graph/kernels/cpu_vector_math.hpp"

namespace accel::graph::cpu {
namespace {

struct Operands {
  const float* q;
  std::int64_t q_stride;
  const float* k;
  std::int64_t k_stride;
  const float* v;
  std::int64_t v_stride;
  float* out;
  std::int64_t out_stride;
  int head_dim;
  float scale;
};

// One head of one sequence: rows [begin, end), columns [column, column + head_dim) of each operand.
void attend(const Operands& o, std::int64_t begin, std::int64_t end, std::int64_t column, std::vector<float>& p) {
  const std::int64_t length = end - begin;
  p.resize(static_cast<std::size_t>(length * length));
  dot_products(o.q + begin * o.q_stride + column, o.q_stride, o.k + begin * o.k_stride + column, o.k_stride, length,
               o.head_dim, 0, length, p.data(), length);
  for (std::int64_t i = 0; i < length; ++i) {
    float* row = p.data() + i * length;
#pragma omp simd
    for (std::int64_t j = 0; j < length; ++j) row[j] *= o.scale;
    const float highest = *std::max_element(row, row + length);
    const float inverse = 1.0f / exp_shifted_sum(row, highest, length, row);
#pragma omp simd
    for (std::int64_t j = 0; j < length; ++j) row[j] *= inverse;
  }
  combined_rows(p.data(), length, o.v + begin * o.v_stride + column, o.v_stride, length, length, 0, o.head_dim,
                o.out + begin * o.out_stride + column, o.out_stride);
}

}  // namespace

void packed_attention(const float* q, std::int64_t q_stride, const float* k, std::int64_t k_stride, const float* v,
                      std::int64_t v_stride, const std::int32_t* offsets, std::int64_t sequences, int heads,
                      int head_dim, float scale, float* out, std::int64_t out_stride) {
  const Operands operands{q, q_stride, k, k_stride, v, v_stride, out, out_stride, head_dim, scale};
  const std::int64_t tasks = sequences * heads;
  double flops = 0;
  for (std::int64_t s = 0; s < sequences; ++s) {
    const double length = std::max(0, offsets[s + 1] - offsets[s]);
    flops += 4.0 * length * length * head_dim * heads;
  }
  // Sequences differ in length, so the tasks are handed out one at a time; below about a million operations the
  // team's wake-up costs more than it saves.
#pragma omp parallel if (flops >= 1e6)
  {
    std::vector<float> p;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t task = 0; task < tasks; ++task) {
      const std::int64_t s = task / heads;
      if (offsets[s + 1] <= offsets[s]) continue;
      attend(operands, offsets[s], offsets[s + 1], (task % heads) * head_dim, p);
    }
  }
}

}  // namespace accel::graph::cpu

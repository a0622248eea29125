// packed_attention on the CPU: one task per (sequence, head), spread over threads when the work pays for them.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"

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
  p.resize(static_cast<std::size_t>(length));
  for (std::int64_t i = begin; i < end; ++i) {
    const float* q = o.q + i * o.q_stride + column;
    float highest = -INFINITY;
    for (std::int64_t j = 0; j < length; ++j) {
      const float* k = o.k + (begin + j) * o.k_stride + column;
      float dot = 0;
      for (int d = 0; d < o.head_dim; ++d) dot += q[d] * k[d];
      p[static_cast<std::size_t>(j)] = dot * o.scale;
      highest = std::max(highest, p[static_cast<std::size_t>(j)]);
    }
    float total = 0;
    for (float& value : p) total += value = std::exp(value - highest);
    float* out = o.out + i * o.out_stride + column;
    std::fill_n(out, o.head_dim, 0.0f);
    for (std::int64_t j = 0; j < length; ++j) {
      const float* v = o.v + (begin + j) * o.v_stride + column;
      const float weight = p[static_cast<std::size_t>(j)] / total;
      for (int d = 0; d < o.head_dim; ++d) out[d] += weight * v[d];
    }
  }
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
  // Below a few million operations a thread's start costs more than it saves.
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const auto workers = static_cast<unsigned>(
      std::clamp<double>(flops / 4e6, 1.0, static_cast<double>(std::min<std::int64_t>(hardware, tasks))));
  std::atomic<std::int64_t> next{0};
  const auto work = [&] {
    std::vector<float> p;
    for (std::int64_t task = next++; task < tasks; task = next++) {
      const std::int64_t s = task / heads;
      if (offsets[s + 1] <= offsets[s]) continue;
      attend(operands, offsets[s], offsets[s + 1], (task % heads) * head_dim, p);
    }
  };
  std::vector<std::jthread> threads;
  for (unsigned t = 1; t < workers; ++t) threads.emplace_back(work);
  work();
}

}  // namespace accel::graph::cpu

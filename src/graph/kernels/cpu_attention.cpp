// packed_attention on the CPU: one task per (sequence, head) on the process's OpenMP team. Both products are
// combined_rows (cpu_small_products.hpp), sums of scaled rows (y_i = sum_c x_ic w_c) that vectorise along the row with
// no horizontal sums, in tiles held in registers: the scores against K's head slice copied transposed into a
// contiguous block (head_dim x length), then O = P V read in place, each row of P its softmax's numerators and each row
// of O divided by their sum afterwards (head_dim values a row rather than length). Queries go in blocks of kQueryBlock
// rows, so that a block's scores (kQueryBlock x length floats) stay in the thread's cache however long the sequence; a
// causal block scores only the keys up to its last query, and a sliding-window block only the keys within the window of
// one of its queries.
#include <algorithm>
#include <array>
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
  int heads;
  int kv_heads;
  int head_dim;
  float scale;
  bool causal;
  int window;  // > 0: query i sees keys j with |i - j| <= window only
};

constexpr std::int64_t kQueryBlock = 64;

// One head of one sequence: rows [begin, end), query and output columns [column, column + head_dim), key and
// value columns [kv_column, kv_column + head_dim). `k_t` and `p` are the task's scratch: K's slice transposed, and
// a block's scores. Their rows are padded with zeros to whole vectors (16 floats), so that the scores' row products
// never fall to the scalar tail loop; the padding's scores are computed and never read (k_t has one vector more,
// for a block whose keys start past 0). A block scores keys [first, last); a row's scores outside its own keys
// (after it when causal, beyond the window) are set to 0 after the softmax, so that P V may run over the block's.
void attend(const Operands& o, std::int64_t begin, std::int64_t end, std::int64_t column, std::int64_t kv_column,
            std::vector<float>& k_t, std::vector<float>& p) {
  const std::int64_t length = end - begin, padded = (length + 15) / 16 * 16;
  k_t.resize(static_cast<std::size_t>(padded * o.head_dim + 16));
  const float* k = o.k + begin * o.k_stride + kv_column;
  for (int d = 0; d < o.head_dim; ++d) {
    float* row = k_t.data() + d * padded;
    for (std::int64_t j = 0; j < length; ++j) row[j] = k[j * o.k_stride + d];
    std::fill(row + length, row + padded, 0.0f);
  }
  const std::int64_t window = o.window > 0 ? o.window : length;
  for (std::int64_t i0 = 0; i0 < length; i0 += kQueryBlock) {
    const std::int64_t rows = std::min(kQueryBlock, length - i0);
    const std::int64_t first = std::max<std::int64_t>(0, i0 - window);
    const std::int64_t last = std::min(o.causal ? i0 + rows : length, i0 + rows + window);
    const std::int64_t keys = last - first, width = (keys + 15) / 16 * 16;
    p.resize(static_cast<std::size_t>(rows * width));
    combined_rows(o.q + (begin + i0) * o.q_stride + column, o.q_stride, k_t.data() + first, padded, rows, o.head_dim, 0,
                  width, p.data(), width);
    std::array<float, kQueryBlock> inverses;
    for (std::int64_t i = 0; i < rows; ++i) {
      float* row = p.data() + i * width;
      const std::int64_t query = i0 + i;
      const std::int64_t from = std::max(first, query - window) - first;
      const std::int64_t to = std::min(o.causal ? query + 1 : last, query + window + 1) - first;
      inverses[static_cast<std::size_t>(i)] = 1.0f / softmax_numerators(row + from, to - from, o.scale);
      std::fill(row, row + from, 0.0f);
      std::fill(row + to, row + keys, 0.0f);
    }
    float* out = o.out + (begin + i0) * o.out_stride + column;
    combined_rows(p.data(), width, o.v + (begin + first) * o.v_stride + kv_column, o.v_stride, rows, keys, 0,
                  o.head_dim, out, o.out_stride);
    for (std::int64_t i = 0; i < rows; ++i) {
      float* out_row = out + i * o.out_stride;
      const float inverse = inverses[static_cast<std::size_t>(i)];
#pragma omp simd
      for (int d = 0; d < o.head_dim; ++d) out_row[d] *= inverse;
    }
  }
}

}  // namespace

void packed_attention(const float* q, std::int64_t q_stride, const float* k, std::int64_t k_stride, const float* v,
                      std::int64_t v_stride, const std::int32_t* offsets, std::int64_t sequences, int heads,
                      int head_dim, float scale, float* out, std::int64_t out_stride, int kv_heads, bool causal,
                      int window) {
  if (kv_heads <= 0) kv_heads = heads;
  const Operands operands{q,          q_stride, k,        k_stride, v,     v_stride, out,
                          out_stride, heads,    kv_heads, head_dim, scale, causal,   window};
  const std::int64_t tasks = sequences * heads;
  double flops = 0;
  for (std::int64_t s = 0; s < sequences; ++s) {
    const double length = std::max(0, offsets[s + 1] - offsets[s]);
    const double keys = window > 0 ? std::min(length, 2.0 * window + 1) : length;
    flops += (causal ? 2.0 : 4.0) * length * keys * head_dim * heads;
  }
  // Sequences differ in length, so the tasks are handed out one at a time; below about a million operations the
  // team's wake-up costs more than it saves.
#pragma omp parallel if (flops >= 1e6)
  {
    std::vector<float> k_t, p;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t task = 0; task < tasks; ++task) {
      const std::int64_t s = task / heads;
      if (offsets[s + 1] <= offsets[s]) continue;
      const std::int64_t h = task % heads;
      attend(operands, offsets[s], offsets[s + 1], h * head_dim, h / (heads / kv_heads) * head_dim, k_t, p);
    }
  }
}

}  // namespace accel::graph::cpu

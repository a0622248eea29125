// Scaled dot-product attention, one query row at a time: masked scores, a softmax shifted by the row's
// maximum (so exp never overflows), and the log-sum-exp the backward pass reads.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dnn/cpu/kernels.hpp"

namespace accel::dnn::cpu {
namespace {

struct AttentionShape {
  std::int64_t batch = 0, heads = 0, seq_q = 0, seq_kv = 0, head_dim = 0, value_dim = 0;
};

Result<AttentionShape> shape_of(const AttentionInputs& in) {
  const auto& q = in.q.dims;
  const auto& k = in.k.dims;
  const auto& v = in.v.dims;
  if (q.size() != 4 || k.size() != 4 || v.size() != 4 || k[0] != q[0] || v[0] != q[0] || k[1] != q[1] || v[1] != q[1] ||
      k[2] != v[2] || k[3] != q[3]) {
    return invalid_argument(fmt::format("attention: q [{}], k [{}] and v [{}] do not fit [B, H, S, D]",
                                        fmt::join(q, ", "), fmt::join(k, ", "), fmt::join(v, ", ")));
  }
  if ((in.seq_len_q == nullptr) != (in.seq_len_kv == nullptr)) {
    return invalid_argument("attention: a padding mask needs both seq_len_q and seq_len_kv");
  }
  for (const DenseTensor* lengths : {in.seq_len_q, in.seq_len_kv}) {
    if (lengths != nullptr && lengths->dims != std::vector<std::int64_t>{q[0], 1, 1, 1}) {
      return invalid_argument(fmt::format("attention: sequence lengths have dims [{}], expected [{}, 1, 1, 1]",
                                          fmt::join(lengths->dims, ", "), q[0]));
    }
  }
  return AttentionShape{
      .batch = q[0], .heads = q[1], .seq_q = q[2], .seq_kv = k[2], .head_dim = q[3], .value_dim = v[3]};
}

}  // namespace

Result<AttentionResult> attention(const AttentionNode& node, const AttentionInputs& in) {
  ACCEL_ASSIGN_OR_RETURN(const AttentionShape s, shape_of(in));
  constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();
  AttentionResult out{.o = {.dims = {s.batch, s.heads, s.seq_q, s.value_dim},
                            .values = std::vector<double>(s.batch * s.heads * s.seq_q * s.value_dim, 0.0)},
                      .stats = {.dims = {s.batch, s.heads, s.seq_q, 1},
                                .values = std::vector<double>(s.batch * s.heads * s.seq_q, kNegativeInfinity)}};
  const double scale = node.scale;
  std::vector<double> weights(s.seq_kv);
  for (std::int64_t b = 0; b < s.batch; ++b) {
    const double valid_q = in.seq_len_q != nullptr ? in.seq_len_q->values[b] : static_cast<double>(s.seq_q);
    const double valid_kv = in.seq_len_kv != nullptr ? in.seq_len_kv->values[b] : static_cast<double>(s.seq_kv);
    for (std::int64_t h = 0; h < s.heads; ++h) {
      const std::int64_t head = b * s.heads + h;
      const double* q = in.q.values.data() + head * s.seq_q * s.head_dim;
      const double* k = in.k.values.data() + head * s.seq_kv * s.head_dim;
      const double* v = in.v.values.data() + head * s.seq_kv * s.value_dim;
      for (std::int64_t i = 0; i < s.seq_q; ++i) {
        // A padded query row, or one whose every key is masked, keeps o = 0 and log-sum-exp = -inf (the
        // log of a sum of no weights).
        if (static_cast<double>(i) >= valid_q) continue;
        double row_max = kNegativeInfinity;
        for (std::int64_t j = 0; j < s.seq_kv; ++j) {
          const bool masked = (node.causal && j > i) || static_cast<double>(j) >= valid_kv;
          double score = kNegativeInfinity;
          if (!masked) {
            score = 0;
            for (std::int64_t d = 0; d < s.head_dim; ++d) score += q[i * s.head_dim + d] * k[j * s.head_dim + d];
            score *= scale;
          }
          weights[j] = score;
          row_max = std::max(row_max, score);
        }
        if (row_max == kNegativeInfinity) continue;
        double sum = 0;
        for (double& w : weights) {
          w = std::exp(w - row_max);
          sum += w;
        }
        double* o = out.o.values.data() + (head * s.seq_q + i) * s.value_dim;
        for (std::int64_t j = 0; j < s.seq_kv; ++j)
          for (std::int64_t d = 0; d < s.value_dim; ++d) o[d] += weights[j] / sum * v[j * s.value_dim + d];
        out.stats.values[head * s.seq_q + i] = row_max + std::log(sum);
      }
    }
  }
  return out;
}

}  // namespace accel::dnn::cpu

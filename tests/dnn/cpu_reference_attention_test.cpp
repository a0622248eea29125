// The CPU reference's attention against a naive softmax, with causal and padding masks.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "accel/dnn/graph.hpp"
#include "dnn/cpu/graph_interpreter.hpp"
#include "testing/dnn_reference.hpp"
#include "testing/status_matchers.hpp"

namespace accel::dnn {
namespace {

using testing::IsOk;
using testing::StatusIs;
using namespace reference_testing;

// -- attention ---------------------------------------------------------------------------------------------

struct AttentionCase {
  bool causal = false;
  std::vector<std::int32_t> seq_q, seq_kv;  // empty: no padding mask
};

constexpr std::int64_t kB = 2, kH = 2, kSq = 5, kSkv = 6, kD = 4, kDv = 3;

// o and log-sum-exp by the definition: exp of every unmasked scaled score, normalised.
void naive_attention(const AttentionCase& c, float scale, const std::vector<double>& q, const std::vector<double>& k,
                     const std::vector<double>& v, std::vector<double>& o, std::vector<double>& stats) {
  o.assign(kB * kH * kSq * kDv, 0.0);
  stats.assign(kB * kH * kSq, -kInfinity);
  for (std::int64_t b = 0; b < kB; ++b)
    for (std::int64_t h = 0; h < kH; ++h)
      for (std::int64_t i = 0; i < kSq; ++i) {
        const std::int64_t row = (b * kH + h) * kSq + i;
        if (!c.seq_q.empty() && i >= c.seq_q[b]) continue;
        std::vector<double> weight(kSkv, 0.0);
        double total = 0;
        for (std::int64_t j = 0; j < kSkv; ++j) {
          if ((c.causal && j > i) || (!c.seq_kv.empty() && j >= c.seq_kv[b])) continue;
          double score = 0;
          for (std::int64_t d = 0; d < kD; ++d) score += q[row * kD + d] * k[((b * kH + h) * kSkv + j) * kD + d];
          weight[j] = std::exp(static_cast<double>(scale) * score);
          total += weight[j];
        }
        if (total == 0) continue;
        stats[row] = std::log(total);
        for (std::int64_t j = 0; j < kSkv; ++j)
          for (std::int64_t d = 0; d < kDv; ++d)
            o[row * kDv + d] += weight[j] / total * v[((b * kH + h) * kSkv + j) * kDv + d];
      }
}

void check_attention(const AttentionCase& c) {
  const float scale = 0.5f;
  GraphBuilder b;
  const TensorRef q = b.tensor(DType::f64, {kB, kH, kSq, kD});
  const TensorRef k = b.tensor(DType::f64, {kB, kH, kSkv, kD});
  const TensorRef v = b.tensor(DType::f64, {kB, kH, kSkv, kDv});
  AttentionParams params{.scale = scale, .causal = c.causal, .with_stats = true};
  if (!c.seq_q.empty()) {
    params.seq_len_q = b.tensor(DType::i32, {kB, 1, 1, 1});
    params.seq_len_kv = b.tensor(DType::i32, {kB, 1, 1, 1});
  }
  const AttentionOutputs out = b.attention(q, k, v, params);
  b.output(out.o, DType::f64);
  b.output(out.stats, DType::f32);
  GraphRun run(build(b));
  const std::vector<double> qs = random_values(kB * kH * kSq * kD, 51, -2, 2);
  const std::vector<double> ks = random_values(kB * kH * kSkv * kD, 52, -2, 2);
  const std::vector<double> vs = random_values(kB * kH * kSkv * kDv, 53);
  run.set(q, qs);
  run.set(k, ks);
  run.set(v, vs);
  if (!c.seq_q.empty()) {
    run.set(params.seq_len_q, {c.seq_q.begin(), c.seq_q.end()});
    run.set(params.seq_len_kv, {c.seq_kv.begin(), c.seq_kv.end()});
  }
  ASSERT_THAT(run.run(), IsOk());
  std::vector<double> want_o, want_stats;
  naive_attention(c, scale, qs, ks, vs, want_o, want_stats);
  expect_near_all(run.get(out.o), want_o, 1e-14);
  const std::vector<double> stats = run.get(out.stats);
  for (std::size_t i = 0; i < stats.size(); ++i) {
    if (std::isinf(want_stats[i])) {
      EXPECT_EQ(stats[i], want_stats[i]) << "row " << i;
    } else {
      EXPECT_NEAR(stats[i], want_stats[i], 1e-6 * (1 + std::abs(want_stats[i]))) << "row " << i;
    }
  }
}

TEST(CpuReferenceAttention, UnmaskedAttentionMatchesANaiveSoftmax) { check_attention({}); }

TEST(CpuReferenceAttention, CausalAttentionGivesNoWeightToLaterKeys) { check_attention({.causal = true}); }

TEST(CpuReferenceAttention, PaddingMasksDropPaddedKeysAndZeroPaddedQueryRows) {
  check_attention({.seq_q = {5, 3}, .seq_kv = {6, 2}});
  check_attention({.causal = true, .seq_q = {4, 2}, .seq_kv = {3, 5}});
}

TEST(CpuReferenceAttention, ARowWithEveryKeyMaskedGivesZeroOutputAndMinusInfiniteLogSumExp) {
  check_attention({.seq_q = {5, 5}, .seq_kv = {0, 4}});
}

}  // namespace
}  // namespace accel::dnn

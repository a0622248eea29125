// The decoder ops' CPU kernels against naive double loops (testing/decoder_reference.hpp): causal and
// grouped-query attention over packed sequences (empty ones, ones longer than a query block, padding rows), and
// the rotary position embedding; sliding-window attention (ModernBERT's local layers).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"
#include "testing/decoder_reference.hpp"
#include "testing/kernel_inputs.hpp"

namespace accel::graph {
namespace {

using testing::offsets_of;
using testing::random;

void expect_near(const std::vector<float>& actual, const std::vector<double>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], tolerance * (1 + std::abs(expected[i]))) << "at " << i;
}

struct Case {
  std::vector<int> lengths;
  int heads, kv_heads, d;
  bool causal;
  int window = 0;
};

TEST(CpuDecoderKernels, CausalAndGroupedQueryAttention) {
  for (const Case& c :
       {Case{{1, 0, 7, 3}, 4, 2, 8, true}, Case{{1, 0, 7, 3}, 4, 1, 6, false}, Case{{200, 0, 65, 64}, 6, 2, 16, true},
        Case{{130, 9}, 4, 4, 32, true}, Case{{150, 3}, 8, 2, 64, false},
        // Sliding windows (ModernBERT's local layers): narrower than a sequence, than a query block, wider than both.
        Case{{1, 0, 7, 3, 40}, 4, 4, 8, false, 2}, Case{{200, 0, 65, 64}, 4, 2, 16, false, 64},
        Case{{150, 9}, 2, 2, 32, true, 5}, Case{{130, 20}, 4, 4, 8, false, 500}}) {
    SCOPED_TRACE(::testing::Message() << c.heads << " heads, " << c.kv_heads << " kv heads, d " << c.d
                                      << (c.causal ? ", causal" : "") << ", window " << c.window);
    const auto offsets = offsets_of(c.lengths);
    const std::int64_t rows = offsets.back() + 2, width = std::int64_t{c.heads} * c.d;
    const std::int64_t kv_width = std::int64_t{c.kv_heads} * c.d, stride = width + 2 * kv_width;
    const auto qkv = random(rows * stride);  // one fused buffer: q, then k, then v in each row
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.d));
    std::vector<float> out(rows * width, -5.0f);
    cpu::packed_attention(qkv.data(), stride, qkv.data() + width, stride, qkv.data() + width + kv_width, stride,
                          offsets.data(), static_cast<std::int64_t>(c.lengths.size()), c.heads, c.d, scale, out.data(),
                          width, c.kv_heads, c.causal, c.window);
    expect_near(
        out,
        testing::attention_reference(qkv.data(), stride, qkv.data() + width, qkv.data() + width + kv_width, stride,
                                     offsets, c.heads, c.kv_heads, c.d, scale, c.causal, rows, -5.0, c.window),
        1e-5);
  }
}

TEST(CpuDecoderKernels, CausalAttentionOfAQueryIgnoresLaterTokens) {
  // Changing the last token of a sequence changes no earlier row of a causal attention.
  const auto offsets = offsets_of({5});
  const int heads = 2, d = 4;
  const std::int64_t width = heads * d;
  auto q = random(5 * width), k = random(5 * width), v = random(5 * width);
  std::vector<float> before(5 * width), after(5 * width);
  cpu::packed_attention(q.data(), width, k.data(), width, v.data(), width, offsets.data(), 1, heads, d, 0.5f,
                        before.data(), width, 0, true);
  for (std::int64_t c = 0; c < width; ++c) k[4 * width + c] += 1.0f, v[4 * width + c] -= 1.0f;
  cpu::packed_attention(q.data(), width, k.data(), width, v.data(), width, offsets.data(), 1, heads, d, 0.5f,
                        after.data(), width, 0, true);
  EXPECT_TRUE(std::equal(before.begin(), before.begin() + 4 * width, after.begin()));
  EXPECT_FALSE(std::equal(before.begin() + 4 * width, before.end(), after.begin() + 4 * width));
}

TEST(CpuDecoderKernels, RopeRotatesEachHeadsHalvesByPosition) {
  for (const auto& [heads, d, theta] : {std::tuple{4, 8, 1000.0f}, std::tuple{2, 128, 1e6f}, std::tuple{3, 2, 10.0f}}) {
    const std::vector<std::int32_t> positions{0, 1, 2, 7, 0, 300, 4095, 1};
    const auto rows = static_cast<std::int64_t>(positions.size());
    const auto x = random(rows * heads * d);
    std::vector<float> y(x.size(), NAN);
    cpu::rope(x.data(), positions.data(), rows, {.heads = heads, .head_dim = d}, theta, y.data());
    // The angle is a float product, as transformers makes it: up to position * 2^-24 radians off the exact one.
    expect_near(y, testing::rope_reference(x, positions, heads, d, theta), 1e-3);
    std::vector<float> in_place = x;
    cpu::rope(in_place.data(), positions.data(), rows, {.heads = heads, .head_dim = d}, theta, in_place.data());
    EXPECT_EQ(in_place, y);
  }
}

// The packed and normalised forms against what they replace: each head RMS-normalised by cpu::rms_norm over the head's
// columns, then the plain rope of q's and of k's heads, v's columns copied.
TEST(CpuDecoderKernels, PackedRopeWithHeadNormsIsTheNormThenTheRotation) {
  const std::vector<std::int32_t> positions{0, 3, 17, 4095, 1};
  const auto rows = static_cast<std::int64_t>(positions.size());
  for (const auto& [heads, kv_heads, d, normed] : {std::tuple{4, 2, 8, true}, std::tuple{2, 2, 128, true},
                                                   std::tuple{6, 3, 16, false}, std::tuple{3, 0, 32, true}}) {
    SCOPED_TRACE(::testing::Message() << heads << "+" << kv_heads << " heads of " << d << (normed ? ", normed" : ""));
    const std::int64_t width = (std::int64_t{heads} + 2 * kv_heads) * d;
    const auto x = random(rows * width);
    const auto q_gamma = random(d), k_gamma = random(d);
    const float eps = 1e-6f;
    std::vector<float> normed_x = x;
    if (normed) {
      for (std::int64_t r = 0; r < rows; ++r)
        for (int h = 0; h < heads + kv_heads; ++h) {
          float* head = normed_x.data() + r * width + std::int64_t{h} * d;
          cpu::rms_norm(head, nullptr, (h < heads ? q_gamma : k_gamma).data(), 1, d, eps, head, nullptr);
        }
    }
    std::vector<float> expected = normed_x;
    for (std::int64_t r = 0; r < rows; ++r)
      for (int h = 0; h < heads + kv_heads; ++h) {
        const float* in = normed_x.data() + r * width + std::int64_t{h} * d;
        cpu::rope(in, &positions[static_cast<std::size_t>(r)], 1, {.heads = 1, .head_dim = d}, 1e6f,
                  expected.data() + r * width + std::int64_t{h} * d);
      }
    const cpu::RopeHeads shape{.heads = heads,
                               .kv_heads = kv_heads,
                               .head_dim = d,
                               .query_norm = normed ? q_gamma.data() : nullptr,
                               .key_norm = normed && kv_heads > 0 ? k_gamma.data() : nullptr,
                               .eps = eps};
    std::vector<float> y(x.size(), NAN);
    cpu::rope(x.data(), positions.data(), rows, shape, 1e6f, y.data());
    expect_near(y, std::vector<double>(expected.begin(), expected.end()), 1e-5);
    std::vector<float> in_place = x;
    cpu::rope(in_place.data(), positions.data(), rows, shape, 1e6f, in_place.data());
    EXPECT_EQ(in_place, y);
  }
}

}  // namespace
}  // namespace accel::graph

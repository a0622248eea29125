// The CPU graph kernels against naive double-precision loops written here, on fresh random inputs of several
// shapes: empty sequences, padding rows past the last sequence, widths that are not multiples of 8; the vector math
// (activations, a softmax's numerators) at every length of a vector's tail.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cpu_vector_math.hpp"
#include "testing/kernel_inputs.hpp"
#include "testing/matmul_reference.hpp"
#include "testing/pool_reference.hpp"

namespace accel::graph {
namespace {

using testing::kPoolModes;
using testing::matmul_reference;
using testing::offsets_of;
using testing::pool_reference;
using testing::random;
using testing::rng;

void expect_near(const std::vector<float>& actual, const std::vector<double>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], tolerance * (1 + std::abs(expected[i]))) << "at " << i;
}

const std::vector<std::int64_t> kWidths{1, 7, 8, 33, 384};

TEST(CpuKernels, GatherRowsZeroesOutOfRangeIndices) {
  for (std::int64_t width : kWidths) {
    const std::int64_t table_rows = 10;
    const auto table = random(table_rows * width);
    const std::vector<std::int32_t> indices{3, -1, 9, 10, 0, 3};
    std::vector<float> out(indices.size() * width, NAN);
    cpu::gather_rows(table.data(), table_rows, width, indices.data(), indices.size(), out.data());
    std::vector<double> expected(out.size(), 0.0);
    for (std::size_t r = 0; r < indices.size(); ++r)
      if (indices[r] >= 0 && indices[r] < table_rows)
        for (std::int64_t c = 0; c < width; ++c) expected[r * width + c] = table[indices[r] * width + c];
    expect_near(out, expected, 0);
  }
}

TEST(CpuKernels, SequencePositionsCountWithinSequencesAndZeroPadding) {
  const auto offsets = offsets_of({3, 0, 1, 4});
  std::vector<std::int32_t> positions(11, -7);
  cpu::sequence_positions(offsets.data(), 4, 11, positions.data());
  EXPECT_EQ(positions, (std::vector<std::int32_t>{0, 1, 2, 0, 0, 1, 2, 3, 0, 0, 0}));
}

TEST(CpuKernels, ActivationsWithAndWithoutBias) {
  for (Activation act : {Activation::identity, Activation::relu, Activation::gelu_erf, Activation::gelu_tanh,
                         Activation::silu, Activation::sigmoid, Activation::tanh, Activation::log1p_relu}) {
    for (std::int64_t width : kWidths) {
      const std::int64_t rows = 5;
      const auto x = random(rows * width, -6, 6), bias = random(width);
      std::vector<float> y(x.size());
      std::vector<double> expected(x.size());
      cpu::bias_activation(x.data(), bias.data(), rows, width, act, y.data());
      for (std::int64_t i = 0; i < rows * width; ++i) expected[i] = activate(act, double{x[i]} + bias[i % width]);
      expect_near(y, expected, 1e-6);
      cpu::unary(act, x.data(), y.data(), rows * width);
      for (std::int64_t i = 0; i < rows * width; ++i) expected[i] = activate(act, x[i]);
      expect_near(y, expected, 1e-6);
    }
  }
}

// Large enough for the OpenMP team and for a unary cut into blocks that are not rows.
TEST(CpuKernels, ActivationsOverManyRowsAndOneLongRow) {
  for (Activation act : {Activation::gelu_erf, Activation::silu, Activation::log1p_relu}) {
    const std::int64_t rows = 301, width = 383;
    const auto x = random(rows * width, -8, 8), bias = random(width);
    std::vector<float> y(x.size());
    std::vector<double> expected(x.size());
    cpu::bias_activation(x.data(), bias.data(), rows, width, act, y.data());
    for (std::int64_t i = 0; i < rows * width; ++i) expected[i] = activate(act, double{x[i]} + bias[i % width]);
    expect_near(y, expected, 1e-6);
    std::vector<float> in_place = x;
    cpu::unary(act, in_place.data(), in_place.data(), rows * width);
    for (std::int64_t i = 0; i < rows * width; ++i) expected[i] = activate(act, x[i]);
    expect_near(in_place, expected, 1e-6);
  }
}

// Row counts on both sides of the few-rows product (32) and of the row-block split (64 a thread), k and n not
// multiples of the vector width, k = 0.
TEST(CpuKernels, MatmulBiasActivationForEveryRowCountAndLayout) {
  for (std::int64_t rows : {1, 3, 32, 33, 300})
    for (std::int64_t k : {0, 7, 384})
      for (std::int64_t n : {1, 13, 130})
        for (bool transpose_w : {false, true})
          for (bool with_bias : {false, true}) {
            const Activation act = with_bias ? Activation::gelu_erf : Activation::identity;
            const auto x = random(rows * k), w = random(k * n), bias = random(n);
            std::vector<float> y(rows * n, NAN);
            cpu::matmul_bias_activation(x.data(), w.data(), transpose_w, with_bias ? bias.data() : nullptr, rows, k, n,
                                        act, y.data());
            SCOPED_TRACE(::testing::Message() << rows << " x " << k << " by " << n << (transpose_w ? " (W^T)" : ""));
            expect_near(y, matmul_reference(x, w, transpose_w, with_bias ? bias.data() : nullptr, rows, k, n, act),
                        1e-4);
          }
}

TEST(CpuKernels, BinaryOpsFullAndRowBroadcast) {
  for (BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div}) {
    for (Broadcast shape : {Broadcast::none, Broadcast::row}) {
      for (std::int64_t width : kWidths) {
        const std::int64_t rows = 4;
        const auto a = random(rows * width);
        const auto b = random(shape == Broadcast::row ? width : rows * width, 0.5f, 2.0f);
        std::vector<float> out(a.size());
        cpu::binary(op, a.data(), b.data(), shape, rows, width, out.data());
        std::vector<double> expected(a.size());
        for (std::int64_t i = 0; i < rows * width; ++i) {
          const double u = a[i], w = b[shape == Broadcast::row ? i % width : i];
          expected[i] = op == BinaryOp::add ? u + w : op == BinaryOp::sub ? u - w : op == BinaryOp::mul ? u * w : u / w;
        }
        expect_near(out, expected, 1e-6);
      }
    }
  }
}

// A gated MLP's activation(a) * b in one pass: rows wider than the kernel's 1,024-element chunk, and out aliasing a
// or b (the graphs' memory plan may place it there).
TEST(CpuKernels, BinaryOpsActivateTheirFirstOperand) {
  for (Activation act : {Activation::silu, Activation::gelu_erf, Activation::gelu_tanh}) {
    for (std::int64_t width : {std::int64_t{1}, std::int64_t{33}, std::int64_t{2500}}) {
      const std::int64_t rows = 3;
      const auto a = random(rows * width, -4, 4), b = random(rows * width);
      std::vector<double> expected(a.size());
      for (std::size_t i = 0; i < a.size(); ++i) expected[i] = activate(act, double{a[i]}) * b[i];
      std::vector<float> out(a.size()), in_a = a, in_b = b;
      cpu::binary(BinaryOp::mul, a.data(), b.data(), Broadcast::none, rows, width, out.data(), act);
      cpu::binary(BinaryOp::mul, in_a.data(), b.data(), Broadcast::none, rows, width, in_a.data(), act);
      cpu::binary(BinaryOp::mul, a.data(), in_b.data(), Broadcast::none, rows, width, in_b.data(), act);
      SCOPED_TRACE(::testing::Message() << static_cast<int>(act) << " width " << width);
      expect_near(out, expected, 1e-5);
      expect_near(in_a, expected, 1e-5);
      expect_near(in_b, expected, 1e-5);
    }
  }
}

// A gated block's two projections stacked: activation(x[:, :w]) * x[:, w:], rows wider than the 1,024-element chunk.
TEST(CpuKernels, GatedMultipliesTheActivatedFirstHalfByTheSecond) {
  for (Activation act : {Activation::identity, Activation::silu, Activation::gelu_erf}) {
    for (std::int64_t width : {std::int64_t{1}, std::int64_t{33}, std::int64_t{2500}}) {
      const std::int64_t rows = 3;
      const auto x = random(rows * 2 * width, -4, 4);
      std::vector<double> expected(rows * width);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < width; ++c)
          expected[r * width + c] = activate(act, double{x[r * 2 * width + c]}) * x[r * 2 * width + width + c];
      std::vector<float> out(rows * width, NAN);
      cpu::gated(x.data(), rows, width, act, out.data());
      SCOPED_TRACE(::testing::Message() << static_cast<int>(act) << " width " << width);
      expect_near(out, expected, 1e-5);
    }
  }
}

// LayerNorm (or RMSNorm) of x + residual in double.
std::vector<double> norm_reference(const std::vector<float>& x, const float* residual, const std::vector<float>& gamma,
                                   const float* beta, std::int64_t width, double eps, bool rms) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < x.size() / width; ++r) {
    std::vector<double> h(width);
    for (std::int64_t c = 0; c < width; ++c) h[c] = double{x[r * width + c]} + (residual ? residual[r * width + c] : 0);
    double mean = 0, square = 0;
    for (double v : h) mean += v / width;
    for (double v : h) square += (rms ? v * v : (v - mean) * (v - mean)) / width;
    if (rms) mean = 0;
    for (std::int64_t c = 0; c < width; ++c)
      y[r * width + c] = (h[c] - mean) / std::sqrt(square + eps) * gamma[c] + (beta ? beta[c] : 0);
  }
  return y;
}

TEST(CpuKernels, LayerNormAndRmsNormWithResidualAndSum) {
  for (std::int64_t width : kWidths) {
    for (bool with_residual : {false, true}) {
      const std::int64_t rows = 6;
      const auto x = random(rows * width, 3, 5), residual = random(rows * width), gamma = random(width),
                 beta = random(width);
      const float* r = with_residual ? residual.data() : nullptr;
      std::vector<float> y(x.size()), sum(x.size());
      cpu::layer_norm(x.data(), r, gamma.data(), beta.data(), rows, width, 1e-5f, y.data(), sum.data());
      expect_near(y, norm_reference(x, r, gamma, beta.data(), width, 1e-5, false), 2e-4);
      std::vector<double> expected_sum(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) expected_sum[i] = double{x[i]} + (r ? r[i] : 0);
      expect_near(sum, expected_sum, 1e-6);
      cpu::layer_norm(x.data(), r, gamma.data(), nullptr, rows, width, 1e-5f, y.data(), nullptr);
      expect_near(y, norm_reference(x, r, gamma, nullptr, width, 1e-5, false), 2e-4);
      cpu::rms_norm(x.data(), r, gamma.data(), rows, width, 1e-6f, y.data(), sum.data());
      expect_near(y, norm_reference(x, r, gamma, nullptr, width, 1e-6, true), 1e-5);
      expect_near(sum, expected_sum, 1e-6);
    }
  }
}

TEST(CpuKernels, EmbeddingLayerNormZeroesPaddingRows) {
  for (std::int64_t width : kWidths) {
    const std::vector<int> lengths{3, 0, 5, 1};
    const auto offsets = offsets_of(lengths);
    const std::int64_t rows = offsets.back() + 2, words = 20, positions = 4;
    const auto word = random(words * width), position = random(positions * width), type = random(width),
               gamma = random(width), beta = random(width);
    std::vector<std::int32_t> ids(rows);
    for (auto& id : ids) id = static_cast<std::int32_t>(rng()() % (words + 2)) - 1;
    std::vector<float> y(rows * width, NAN);
    cpu::embedding_layer_norm(word.data(), words, position.data(), positions, type.data(), ids.data(), offsets.data(),
                              4, rows, width, gamma.data(), beta.data(), 1e-12f, y.data());
    std::vector<float> h(rows * width, 0.0f);
    std::vector<std::int32_t> pos(rows);
    cpu::sequence_positions(offsets.data(), 4, rows, pos.data());
    for (std::int64_t r = 0; r < offsets.back(); ++r)
      for (std::int64_t c = 0; c < width; ++c)
        h[r * width + c] = (ids[r] >= 0 && ids[r] < words ? word[ids[r] * width + c] : 0.0f) +
                           (pos[r] < positions ? position[pos[r] * width + c] : 0.0f) + type[c];
    auto expected = norm_reference(h, nullptr, gamma, beta.data(), width, 1e-12, false);
    for (std::int64_t i = offsets.back() * width; i < rows * width; ++i) expected[i] = 0;
    expect_near(y, expected, 2e-4);
  }
}

// softmax(scale Q K^T) V per sequence and head in double; rows outside every sequence keep `fill`.
std::vector<double> attention_reference(const std::vector<float>& qkv, std::int64_t stride,
                                        const std::vector<int>& lengths, int heads, int d, double scale,
                                        std::int64_t rows, double fill) {
  const std::int64_t hidden = std::int64_t{heads} * d;
  std::vector<double> out(rows * hidden, fill);
  std::int64_t begin = 0;
  for (int length : lengths) {
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < length; ++i) {
        std::vector<double> p(length);
        double highest = -INFINITY, total = 0;
        for (int j = 0; j < length; ++j) {
          double dot = 0;
          for (int c = 0; c < d; ++c)
            dot += double{qkv[(begin + i) * stride + h * d + c]} * qkv[(begin + j) * stride + hidden + h * d + c];
          p[j] = dot * scale;
          highest = std::max(highest, p[j]);
        }
        for (double& v : p) total += v = std::exp(v - highest);
        for (int c = 0; c < d; ++c) {
          double o = 0;
          for (int j = 0; j < length; ++j) o += p[j] / total * qkv[(begin + j) * stride + 2 * hidden + h * d + c];
          out[(begin + i) * hidden + h * d + c] = o;
        }
      }
    }
    begin += length;
  }
  return out;
}

TEST(CpuKernels, PackedAttentionOverAFusedQkvBuffer) {
  struct Case {
    std::vector<int> lengths;
    int heads, d;
  };
  for (const Case& c : {Case{{1, 0, 7, 3}, 2, 5}, Case{{16, 33, 0, 64}, 3, 32}, Case{{200, 57}, 12, 32}}) {
    const auto offsets = offsets_of(c.lengths);
    const std::int64_t rows = offsets.back() + 3, hidden = std::int64_t{c.heads} * c.d, stride = 3 * hidden;
    const auto qkv = random(rows * stride);
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.d));
    std::vector<float> out(rows * hidden, -5.0f);
    cpu::packed_attention(qkv.data(), stride, qkv.data() + hidden, stride, qkv.data() + 2 * hidden, stride,
                          offsets.data(), static_cast<std::int64_t>(c.lengths.size()), c.heads, c.d, scale, out.data(),
                          hidden);
    expect_near(out, attention_reference(qkv, stride, c.lengths, c.heads, c.d, scale, rows, -5.0), 1e-5);
  }
}

TEST(CpuKernels, EveryPoolModeAndL2Normalize) {
  for (std::int64_t width : kWidths) {
    const auto offsets = offsets_of({0, 2, 5, 0, 1});
    const std::int64_t sequences = 5;
    auto x = random(offsets.back() * width, -3, 3);
    x.resize((offsets.back() + 2) * width, NAN);  // padding rows past the last sequence, which no mode may read
    for (PoolMode mode : kPoolModes) {
      SCOPED_TRACE(to_string(mode));
      std::vector<float> pooled(sequences * width, NAN);
      cpu::pool(mode, x.data(), width, offsets.data(), sequences, pooled.data());
      expect_near(pooled, pool_reference(mode, x, width, offsets), 1e-6);
    }
    std::vector<float> pooled(sequences * width);
    cpu::pool(PoolMode::mean, x.data(), width, offsets.data(), sequences, pooled.data());
    std::vector<double> expected = pool_reference(PoolMode::mean, x, width, offsets);

    std::vector<float> normalized(pooled.size());
    cpu::l2_normalize(pooled.data(), sequences, width, 1e-12f, normalized.data());
    for (int s = 0; s < sequences; ++s) {
      double norm = 0;
      for (std::int64_t c = 0; c < width; ++c) norm += expected[s * width + c] * expected[s * width + c];
      for (std::int64_t c = 0; c < width; ++c) expected[s * width + c] /= std::max(std::sqrt(norm), 1e-12);
    }
    expect_near(normalized, expected, 1e-5);
  }
}

TEST(CpuKernels, CastRoundTripsAndStridedCopyTransposes) {
  const auto x = random(37);
  std::vector<std::uint16_t> half(37);
  std::vector<float> back(37);
  for (DType t : {DType::f16, DType::bf16}) {
    ASSERT_TRUE(cpu::cast(DType::f32, x.data(), t, half.data(), 37));
    ASSERT_TRUE(cpu::cast(t, half.data(), DType::f32, back.data(), 37));
    const double relative = t == DType::f16 ? 1.0 / 2048 : 1.0 / 256;
    for (int i = 0; i < 37; ++i) EXPECT_NEAR(back[i], x[i], relative * std::abs(x[i]));
  }
  EXPECT_FALSE(cpu::cast(DType::i32, x.data(), DType::f32, back.data(), 1));

  // Past one chunk of the array conversions (2,500 elements), and between the two 16-bit types: the same bits as the
  // one-element conversions, through f32.
  const auto many = random(2500);
  std::vector<Half> halves(2500);
  std::vector<BFloat16> bfloats(2500);
  std::vector<float> widened(2500);
  ASSERT_TRUE(cpu::cast(DType::f32, many.data(), DType::f16, halves.data(), 2500));
  ASSERT_TRUE(cpu::cast(DType::f16, halves.data(), DType::bf16, bfloats.data(), 2500));
  ASSERT_TRUE(cpu::cast(DType::bf16, bfloats.data(), DType::f32, widened.data(), 2500));
  for (int i = 0; i < 2500; ++i) {
    ASSERT_EQ(halves[i].bits, to_half(many[i]).bits) << i;
    ASSERT_EQ(bfloats[i].bits, to_bfloat16(to_float(halves[i])).bits) << i;
    ASSERT_EQ(widened[i], to_float(bfloats[i])) << i;
  }

  // [2, 3, 4] read as its transpose [4, 3, 2], and a column slice of a [5, 6] matrix.
  const auto t = random(24);
  std::vector<float> y(24);
  cpu::strided_copy(t.data(), StridedLayout{.rank = 3, .shape = {4, 3, 2}, .strides = {1, 4, 12}}, y.data());
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 2; ++c) EXPECT_EQ(y[(a * 3 + b) * 2 + c], t[c * 12 + b * 4 + a]);
  const auto m = random(30);
  std::vector<float> slice(10);
  cpu::strided_copy(m.data() + 2, StridedLayout{.rank = 2, .shape = {5, 2}, .strides = {6, 1}}, slice.data());
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 2; ++c) EXPECT_EQ(slice[r * 2 + c], m[r * 6 + 2 + c]);
}

// Each activation against its definition in double, at every length up to three vectors and across the 256-element
// chunks: the vector functions' tails run as masked vectors, which must neither read nor write past `count`.
TEST(CpuVectorMath, ActivationsMatchTheirDefinitionsAtEveryTailLength) {
  const auto reference = [](Activation a, double x) {
    switch (a) {
      case Activation::identity: return x;
      case Activation::relu: return std::max(x, 0.0);
      case Activation::gelu_tanh: return 0.5 * x * (1 + std::tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
      case Activation::silu: return x / (1 + std::exp(-x));
      case Activation::gelu_erf: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
      case Activation::sigmoid: return 1 / (1 + std::exp(-x));
      case Activation::tanh: return std::tanh(x);
      case Activation::log1p_relu: return std::log1p(std::max(x, 0.0));
    }
    return x;
  };
  std::vector<std::int64_t> lengths;
  for (std::int64_t n = 0; n <= 48; ++n) lengths.push_back(n);
  for (std::int64_t n : {255, 256, 257, 1000}) lengths.push_back(n);
  for (const Activation a : {Activation::identity, Activation::relu, Activation::gelu_tanh, Activation::silu,
                             Activation::gelu_erf, Activation::sigmoid, Activation::tanh, Activation::log1p_relu})
    for (const std::int64_t n : lengths) {
      SCOPED_TRACE(::testing::Message() << "activation " << static_cast<int>(a) << " n=" << n);
      std::vector<float> x = random(n + 16, -4.0f, 4.0f);
      const std::vector<float> bias = random(n, -1.0f, 1.0f), before = x;
      cpu::bias_activate_row(x.data(), bias.data(), n, a);
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(x[i], reference(a, static_cast<double>(before[i]) + bias[i]), 2e-6) << "at " << i;
      for (std::int64_t i = n; i < n + 16; ++i) ASSERT_EQ(x[i], before[i]) << "written past the end at " << i;
    }
}

// exp(scale (x - m)) with m the row's largest value (smallest for a negative scale), and their sum, at every tail
// length; no numerator passes 1 however large the scores.
TEST(CpuVectorMath, SoftmaxNumeratorsAreShiftedExponentialsForEitherSignOfTheScale) {
  for (const float scale : {0.125f, 1.0f, -0.5f, 0.0f})
    for (std::int64_t n = 0; n <= 70; ++n) {
      SCOPED_TRACE(::testing::Message() << "scale " << scale << " n=" << n);
      std::vector<float> x = random(n + 16, -200.0f, 200.0f);
      const std::vector<float> before = x;
      const float sum = cpu::softmax_numerators(x.data(), n, scale);
      double shift = n > 0 ? before[0] : 0, want = 0;
      for (std::int64_t i = 0; i < n; ++i)
        shift = scale >= 0 ? std::max<double>(shift, before[i]) : std::min<double>(shift, before[i]);
      for (std::int64_t i = 0; i < n; ++i) {
        const double expected = std::exp(static_cast<double>(scale) * (before[i] - shift));
        want += expected;
        ASSERT_NEAR(x[i], expected, 1e-6 + 1e-5 * expected) << "at " << i;
        ASSERT_LE(x[i], 1.0f) << "at " << i;
      }
      EXPECT_NEAR(sum, want, 1e-5 * std::max(want, 1.0));
      for (std::int64_t i = n; i < n + 16; ++i) ASSERT_EQ(x[i], before[i]) << "written past the end at " << i;
    }
}

}  // namespace
}  // namespace accel::graph

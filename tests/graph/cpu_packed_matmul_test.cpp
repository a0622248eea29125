// The graph's packed matmul (oneDNN, weights reordered once) against a double loop written here, for several row
// counts, k and n not multiples of the vector width, both weight layouts, every activation with and without bias;
// one packing serves every later run; bf16 is refused where the CPU lacks it and close to f32 where it has it, and
// bf16-stored weights pack as their f32 values.
#include "graph/kernels/cpu_packed_matmul.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "graph/kernels/op_kinds.hpp"
#include "testing/kernel_inputs.hpp"
#include "testing/matmul_reference.hpp"

namespace accel::graph {
namespace {

using cpu::MatmulPrecision;
using cpu::PackedMatmul;
using testing::matmul_reference;
using testing::random;

void expect_near(const std::vector<float>& actual, const std::vector<double>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], tolerance * (1 + std::abs(expected[i]))) << "at " << i;
}

constexpr Activation kActivations[] = {Activation::identity, Activation::relu,      Activation::gelu_tanh,
                                       Activation::gelu_erf, Activation::silu,      Activation::sigmoid,
                                       Activation::tanh,     Activation::log1p_relu};

TEST(CpuPackedMatmul, MatchesTheReferenceForEveryShapeLayoutAndActivation) {
  for (std::int64_t k : {7, 384})
    for (std::int64_t n : {13, 130})
      for (bool transpose_w : {false, true})
        for (bool with_bias : {false, true})
          for (Activation act : kActivations) {
            const auto w = random(k * n), bias = random(n);
            const float* b = with_bias ? bias.data() : nullptr;
            auto packed = PackedMatmul::make(w.data(), transpose_w, b, k, n, act, MatmulPrecision::f32);
            ASSERT_TRUE(packed.ok()) << packed.status().message();
            // One packing, several row counts (the rows are a run-time dimension).
            for (std::int64_t rows : {1, 33, 300}) {
              const auto x = random(rows * k);
              std::vector<float> y(rows * n, NAN);
              ASSERT_TRUE((*packed)->run(x.data(), rows, y.data()).ok());
              SCOPED_TRACE(::testing::Message() << rows << " x " << k << " by " << n << (transpose_w ? " (W^T)" : "")
                                                << " bias " << with_bias << " act " << static_cast<int>(act));
              expect_near(y, matmul_reference(x, w, transpose_w, b, rows, k, n, act), 1e-4);
            }
          }
}

TEST(CpuPackedMatmul, PacksOnceForManyRuns) {
  const std::int64_t k = 64, n = 96, rows = 200;
  const auto w = random(k * n), x = random(rows * k);
  const std::uint64_t before = PackedMatmul::packs_made();
  auto packed = PackedMatmul::make(w.data(), false, nullptr, k, n, Activation::identity, MatmulPrecision::f32);
  ASSERT_TRUE(packed.ok());
  std::vector<float> y(rows * n);
  for (int run = 0; run < 5; ++run) ASSERT_TRUE((*packed)->run(x.data(), rows, y.data()).ok());
  EXPECT_EQ(PackedMatmul::packs_made() - before, 1u);
}

// SPLADE's weights are sparse: every output whose sum is <= 0 must be exactly 0, not oneDNN's log(1) ~ 1e-8.
TEST(CpuPackedMatmul, Log1pReluKeepsExactZeros) {
  const std::int64_t k = 48, n = 40, rows = 64;
  const auto x = random(rows * k, 0.0f, 1.0f), w = random(k * n, -1.0f, -0.1f);
  auto packed = PackedMatmul::make(w.data(), false, nullptr, k, n, Activation::log1p_relu, MatmulPrecision::f32);
  ASSERT_TRUE(packed.ok());
  std::vector<float> y(rows * n, NAN);
  ASSERT_TRUE((*packed)->run(x.data(), rows, y.data()).ok());
  for (float v : y) ASSERT_EQ(v, 0.0f);
}

TEST(CpuPackedMatmul, Bf16IsRefusedWithoutHardwareAndCloseToF32WithIt) {
  const std::int64_t k = 384, n = 130, rows = 100;
  const auto w = random(k * n), x = random(rows * k), bias = random(n);
  auto packed = PackedMatmul::make(w.data(), true, bias.data(), k, n, Activation::gelu_erf, MatmulPrecision::bf16);
  if (!cpu::cpu_has_bf16()) {
    ASSERT_FALSE(packed.ok());
    EXPECT_EQ(packed.code(), Code::not_supported);
    EXPECT_NE(packed.status().message().find("bf16"), std::string::npos);
    // The refusal is what this CPU can show (a skip would fail scripts/test, where only GPU tests may skip); the
    // accuracy half runs where avx512_bf16 or AMX is (it passed on the H200 host's AMX, PERFORMANCE 31.2).
    return;
  }
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  std::vector<float> y(rows * n);
  const Status ran = (*packed)->run(x.data(), rows, y.data());
  ASSERT_TRUE(ran.ok()) << ran.message();
  // bf16 keeps 8 bits of mantissa in x and W: each product is off by up to ~2^-8 of itself, so a sum of k of them
  // is off by about 2^-8 sqrt(k) times a typical product, whatever the size of the sum: an absolute bound on the
  // scale of the outputs, not a relative one (outputs near 0 are as far off as large ones).
  const std::vector<double> expected = matmul_reference(x, w, true, bias.data(), rows, k, n, Activation::gelu_erf);
  double scale = 0;
  for (double e : expected) scale = std::max(scale, std::abs(e));
  for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], expected[i], 2e-2 * scale) << "at " << i;
}

// A bf16 graph's weights are packed from the bf16 its weights buffer holds: the same product as from the f32 of
// those values, to the bit, in either layout. Stored bf16 for an f32 product is refused.
TEST(CpuPackedMatmul, Bf16StoredWeightsPackAsTheirF32Values) {
  const std::int64_t k = 96, n = 40, rows = 70;
  auto w = random(k * n);
  const auto x = random(rows * k), bias = random(n);
  std::vector<BFloat16> w_bf16(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    w_bf16[i] = to_bfloat16(w[i]);
    w[i] = to_float(w_bf16[i]);
  }
  auto refused =
      PackedMatmul::make(w_bf16.data(), false, nullptr, k, n, Activation::identity, MatmulPrecision::f32, DType::bf16);
  EXPECT_EQ(refused.code(), Code::invalid_argument);
  for (bool transpose_w : {false, true}) {
    auto from_f32 =
        PackedMatmul::make(w.data(), transpose_w, bias.data(), k, n, Activation::relu, MatmulPrecision::bf16);
    auto from_bf16 = PackedMatmul::make(w_bf16.data(), transpose_w, bias.data(), k, n, Activation::relu,
                                        MatmulPrecision::bf16, DType::bf16);
    if (!cpu::cpu_has_bf16()) {
      EXPECT_EQ(from_bf16.code(), Code::not_supported);
      return;
    }
    ASSERT_TRUE(from_f32.ok()) << from_f32.status().message();
    ASSERT_TRUE(from_bf16.ok()) << from_bf16.status().message();
    std::vector<float> y_f32(rows * n), y_bf16(rows * n);
    ASSERT_TRUE((*from_f32)->run(x.data(), rows, y_f32.data()).ok());
    ASSERT_TRUE((*from_bf16)->run(x.data(), rows, y_bf16.data()).ok());
    EXPECT_EQ(y_bf16, y_f32) << "transpose_w " << transpose_w;
    const std::vector<double> expected = matmul_reference(x, w, transpose_w, bias.data(), rows, k, n, Activation::relu);
    double scale = 0;  // x's rounding to bf16 bounds the error on the outputs' scale (as in the test above)
    for (double e : expected) scale = std::max(scale, std::abs(e));
    for (std::size_t i = 0; i < y_bf16.size(); ++i) ASSERT_NEAR(y_bf16[i], expected[i], 2e-2 * scale) << "at " << i;
  }
}

}  // namespace
}  // namespace accel::graph

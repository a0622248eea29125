// The CPU reference's pointwise, matmul, normalisation, reduction, reshape and pooling nodes against
// hand-computed values and their defining formulas.
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

// -- pointwise ---------------------------------------------------------------------------------------------

std::vector<double> run_unary(PointwiseMode mode, const std::vector<double>& xs, float alpha = 1.0f) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f64, {static_cast<std::int64_t>(xs.size())});
  const TensorRef y = b.pointwise(mode, x, {}, alpha);
  b.output(y, DType::f64);
  GraphRun run(build(b));
  run.set(x, xs);
  EXPECT_THAT(run.run(), IsOk());
  return run.get(y);
}

TEST(CpuReferencePointwise, UnaryModesGiveTheirDefiningFormulas) {
  EXPECT_EQ(run_unary(PointwiseMode::relu, {-2, 0, 3}), (std::vector<double>{0, 0, 3}));
  EXPECT_EQ(run_unary(PointwiseMode::identity, {-2, 0.5}), (std::vector<double>{-2, 0.5}));
  EXPECT_EQ(run_unary(PointwiseMode::neg, {-2, 0.5}), (std::vector<double>{2, -0.5}));
  EXPECT_EQ(run_unary(PointwiseMode::abs, {-2, 0.5}), (std::vector<double>{2, 0.5}));
  EXPECT_EQ(run_unary(PointwiseMode::sqrt, {4, 2.25}), (std::vector<double>{2, 1.5}));
  EXPECT_EQ(run_unary(PointwiseMode::rsqrt, {4, 0.25}), (std::vector<double>{0.5, 2}));
  expect_near_all(run_unary(PointwiseMode::sigmoid, {0, 2}), {0.5, 0.8807970779778823}, 1e-15);
  expect_near_all(run_unary(PointwiseMode::tanh, {0, 1}), {0, 0.7615941559557649}, 1e-15);
  expect_near_all(run_unary(PointwiseMode::exp, {0, 1}), {1, 2.718281828459045}, 1e-15);
  expect_near_all(run_unary(PointwiseMode::log, {1, 2.718281828459045}), {0, 1}, 1e-15);
  expect_near_all(run_unary(PointwiseMode::gelu, {-1, 0, 1}), {0.8413447460685429 - 1, 0, 0.8413447460685429}, 1e-15);
  expect_near_all(run_unary(PointwiseMode::gelu_approx_tanh, {0, 1}), {0, 0.8411919906082768}, 1e-15);
  // alpha is swish's beta, elu's alpha and softplus's beta.
  expect_near_all(run_unary(PointwiseMode::swish, {1, 0}, 2.0f), {0.8807970779778823, 0}, 1e-15);
  expect_near_all(run_unary(PointwiseMode::elu, {-1, 2}, 0.5f), {-0.31606027941427883, 2}, 1e-15);
  expect_near_all(run_unary(PointwiseMode::softplus, {1, 0}, 2.0f), {1.0634640055214863, std::log(2.0) / 2}, 1e-15);
}

TEST(CpuReferencePointwise, SoftplusOfLargeInputsIsTheInputNotInfinity) {
  expect_near_all(run_unary(PointwiseMode::softplus, {800, -800}), {800, 0}, 1e-12);
}

TEST(CpuReferencePointwise, BinaryModesBroadcastEachOperandWhereItsExtentIsOne) {
  // a [2, 1] against b [1, 3]: an outer operation, both operands broadcasting.
  for (auto [mode, want] : std::vector<std::pair<PointwiseMode, std::vector<double>>>{
           {PointwiseMode::add, {11, 21, 31, 12, 22, 32}},
           {PointwiseMode::sub, {-9, -19, -29, -8, -18, -28}},
           {PointwiseMode::mul, {10, 20, 30, 20, 40, 60}},
           {PointwiseMode::div, {0.1, 0.05, 1.0 / 30, 0.2, 0.1, 2.0 / 30}},
           {PointwiseMode::min, {1, 1, 1, 2, 2, 2}},
           {PointwiseMode::max, {10, 20, 30, 10, 20, 30}},
       }) {
    GraphBuilder b;
    const TensorRef x = b.tensor(DType::f64, {2, 1});
    const TensorRef y = b.tensor(DType::f64, {1, 3});
    const TensorRef out = b.pointwise(mode, x, y);
    b.output(out, DType::f64);
    GraphRun run(build(b));
    run.set(x, {1, 2});
    run.set(y, {10, 20, 30});
    ASSERT_THAT(run.run(), IsOk());
    expect_near_all(run.get(out), want, 1e-15);
  }
}

// -- matmul ------------------------------------------------------------------------------------------------

TEST(CpuReferenceMatmul, BatchedProductsBroadcastTheBatchDimsOfEitherSide) {
  GraphBuilder b;
  const TensorRef a = b.tensor(DType::f64, {2, 1, 2, 3});
  const TensorRef c = b.tensor(DType::f64, {1, 3, 3, 4});
  const TensorRef out = b.matmul(a, c);
  b.output(out, DType::f64);
  GraphRun run(build(b));
  const std::vector<double> as = random_values(12, 21), cs = random_values(36, 22);
  run.set(a, as);
  run.set(c, cs);
  ASSERT_THAT(run.run(), IsOk());
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int m = 0; m < 2; ++m)
        for (int n = 0; n < 4; ++n) {
          double sum = 0;
          for (int k = 0; k < 3; ++k) sum += as[(i * 2 + m) * 3 + k] * cs[(j * 3 + k) * 4 + n];
          want.push_back(sum);
        }
  expect_near_all(run.get(out), want, 1e-15);
}

TEST(CpuReferenceMatmul, ATwoByTwoProductGivesHandComputedValues) {
  GraphBuilder b;
  const TensorRef a = b.tensor(DType::f32, {2, 2});
  const TensorRef c = b.tensor(DType::f32, {2, 2});
  const TensorRef out = b.matmul(a, c);
  b.output(out, DType::f32);
  GraphRun run(build(b));
  run.set(a, {1, 2, 3, 4});
  run.set(c, {5, 6, 7, 8});
  ASSERT_THAT(run.run(), IsOk());
  EXPECT_EQ(run.get(out), (std::vector<double>{19, 22, 43, 50}));
}

// -- normalisation -----------------------------------------------------------------------------------------

TEST(CpuReferenceNorm, BatchNormInferenceAppliesTheGivenStatisticsPerChannel) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {1, 2, 1, 2});
  const TensorRef mean = b.tensor(DType::f32, {1, 2, 1, 1});
  const TensorRef inv_variance = b.tensor(DType::f32, {1, 2, 1, 1});
  const TensorRef scale = b.tensor(DType::f32, {1, 2, 1, 1});
  const TensorRef bias = b.tensor(DType::f32, {1, 2, 1, 1});
  const TensorRef y = b.batch_norm_inference(x, mean, inv_variance, scale, bias);
  b.output(y, DType::f32);
  GraphRun run(build(b));
  run.set(x, {1, 2, 3, 4});
  run.set(mean, {1, 3});
  run.set(inv_variance, {2, 0.5});
  run.set(scale, {1, 2});
  run.set(bias, {0, 1});
  ASSERT_THAT(run.run(), IsOk());
  EXPECT_EQ(run.get(y), (std::vector<double>{0, 2, 1, 2}));
}

TEST(CpuReferenceNorm, BatchNormTrainingNormalisesEachChannelAndWritesItsStatistics) {
  constexpr float kEpsilon = 1e-3f;
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f64, {4, 3, 2, 2}, TensorLayout::channels_last);
  const TensorRef scale = b.tensor(DType::f64, {1, 3, 1, 1});
  const TensorRef bias = b.tensor(DType::f64, {1, 3, 1, 1});
  const NormOutputs out = b.batch_norm_training(x, scale, bias, kEpsilon);
  b.output(out.y, DType::f64);
  b.output(out.mean, DType::f64);
  b.output(out.inv_variance, DType::f64);
  GraphRun run(build(b));
  const std::vector<double> xs = random_values(48, 31, 2, 7);
  run.set(x, xs);
  run.set(scale, {1, 2, 0.5});
  run.set(bias, {0, 1, -1});
  ASSERT_THAT(run.run(), IsOk());
  const std::vector<double> y = run.get(out.y), means = run.get(out.mean), inv = run.get(out.inv_variance);
  for (int c = 0; c < 3; ++c) {
    double sum = 0, squares = 0, y_sum = 0, y_squares = 0;
    for (int i = 0; i < 48; ++i) {
      if (i / 4 % 3 != c) continue;
      sum += xs[i];
      squares += xs[i] * xs[i];
      y_sum += y[i];
      y_squares += y[i] * y[i];
    }
    const double mean = sum / 16, variance = squares / 16 - mean * mean;
    EXPECT_NEAR(means[c], mean, 1e-12);
    EXPECT_NEAR(inv[c], 1 / std::sqrt(variance + static_cast<double>(kEpsilon)), 1e-9);
    // y = scale * unit-variance values + bias: its mean is the bias, its variance scale^2 var / (var + eps).
    const double want_scale[] = {1, 2, 0.5}, want_bias[] = {0, 1, -1};
    const double y_mean = y_sum / 16;
    EXPECT_NEAR(y_mean, want_bias[c], 1e-12);
    EXPECT_NEAR(y_squares / 16 - y_mean * y_mean,
                want_scale[c] * want_scale[c] * variance / (variance + static_cast<double>(kEpsilon)), 1e-9);
  }
}

TEST(CpuReferenceNorm, LayerNormGivesEachSampleZeroMeanAndUnitVariance) {
  constexpr float kEpsilon = 1e-5f;
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f64, {3, 4, 5});
  const TensorRef scale = b.tensor(DType::f64, {1, 4, 5});
  const TensorRef bias = b.tensor(DType::f64, {1, 4, 5});
  const NormOutputs out = b.layer_norm(x, scale, bias, kEpsilon, /*training=*/true);
  b.output(out.y, DType::f64);
  b.output(out.mean, DType::f64);
  b.output(out.inv_variance, DType::f64);
  GraphRun run(build(b));
  const std::vector<double> xs = random_values(60, 41, -3, 5);
  run.set(x, xs);
  run.set(scale, std::vector<double>(20, 1.0));
  run.set(bias, std::vector<double>(20, 0.0));
  ASSERT_THAT(run.run(), IsOk());
  const std::vector<double> y = run.get(out.y), means = run.get(out.mean), inv = run.get(out.inv_variance);
  ASSERT_EQ(means.size(), 3u);
  for (int n = 0; n < 3; ++n) {
    double sum = 0, squares = 0, y_sum = 0, y_squares = 0;
    for (int i = n * 20; i < n * 20 + 20; ++i) {
      sum += xs[i];
      squares += xs[i] * xs[i];
      y_sum += y[i];
      y_squares += y[i] * y[i];
    }
    const double mean = sum / 20, variance = squares / 20 - mean * mean;
    EXPECT_NEAR(means[n], mean, 1e-12);
    EXPECT_NEAR(inv[n], 1 / std::sqrt(variance + static_cast<double>(kEpsilon)), 1e-9);
    EXPECT_NEAR(y_sum / 20, 0, 1e-12);
    EXPECT_NEAR(y_squares / 20, variance / (variance + static_cast<double>(kEpsilon)), 1e-9);
  }
}

TEST(CpuReferenceNorm, RmsNormScalesEachSampleToUnitMeanSquareAndAddsAnOptionalBias) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f64, {2, 4});
  const TensorRef scale = b.tensor(DType::f64, {1, 4});
  const TensorRef bias = b.tensor(DType::f64, {1, 4});
  const NormOutputs out = b.rms_norm(x, scale, 0.0625f, /*training=*/true, bias);
  b.output(out.y, DType::f64);
  b.output(out.inv_variance, DType::f64);
  GraphRun run(build(b));
  // Mean squares 7.5 and 0.9375: + epsilon, 7.5625 = 2.75^2 and 1 = 1^2.
  run.set(x, {1, 2, 3, 4, 1.5, -0.5, 1, -0.5});
  run.set(scale, {1, 1, 2, 2});
  run.set(bias, {0, 0, 0, 1});
  ASSERT_THAT(run.run(), IsOk());
  expect_near_all(run.get(out.inv_variance), {1 / 2.75, 1}, 1e-15);
  expect_near_all(run.get(out.y), {1 / 2.75, 2 / 2.75, 6 / 2.75, 8 / 2.75 + 1, 1.5, -0.5, 2, 0}, 1e-15);
}

// -- reductions, reshapes and pooling ----------------------------------------------------------------------

std::vector<double> run_reduction(ReductionMode mode, std::initializer_list<std::int64_t> out_dims) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f64, {2, 3});
  const TensorRef out = b.reduction(mode, x, out_dims);
  b.output(out, DType::f64);
  GraphRun run(build(b));
  run.set(x, {1, -2, 3, -4, 5, -6});
  EXPECT_THAT(run.run(), IsOk());
  return run.get(out);
}

TEST(CpuReferenceReduction, EachModeReducesTheDimsWhereTheOutputHasExtentOne) {
  EXPECT_EQ(run_reduction(ReductionMode::add, {2, 1}), (std::vector<double>{2, -5}));
  EXPECT_EQ(run_reduction(ReductionMode::add, {1, 3}), (std::vector<double>{-3, 3, -3}));
  EXPECT_EQ(run_reduction(ReductionMode::add, {1, 1}), (std::vector<double>{-3}));
  EXPECT_EQ(run_reduction(ReductionMode::add, {2, 3}), (std::vector<double>{1, -2, 3, -4, 5, -6}));
  EXPECT_EQ(run_reduction(ReductionMode::mul, {2, 1}), (std::vector<double>{-6, 120}));
  EXPECT_EQ(run_reduction(ReductionMode::min, {2, 1}), (std::vector<double>{-2, -6}));
  EXPECT_EQ(run_reduction(ReductionMode::max, {1, 3}), (std::vector<double>{1, 5, 3}));
  expect_near_all(run_reduction(ReductionMode::mean, {2, 1}), {2.0 / 3, -5.0 / 3}, 1e-15);
  EXPECT_EQ(run_reduction(ReductionMode::norm1, {2, 1}), (std::vector<double>{6, 15}));
  expect_near_all(run_reduction(ReductionMode::norm2, {2, 1}), {std::sqrt(14.0), std::sqrt(77.0)}, 1e-15);
}

TEST(CpuReferenceReshape, AReshapeKeepsTheRowMajorOrderOfTheLogicalDimsWhateverTheLayout) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f64, {1, 2, 1, 3}, TensorLayout::channels_last);
  const TensorRef y = b.reshape(x, {3, 2});
  b.output(y, DType::f64);
  GraphRun run(build(b));
  run.set(x, {1, 2, 3, 4, 5, 6});
  ASSERT_THAT(run.run(), IsOk());
  EXPECT_EQ(run.get(y), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

std::vector<double> run_pooling(std::initializer_list<std::int64_t> dims, const std::vector<double>& xs,
                                PoolingParams params) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f64, dims);
  const TensorRef y = b.pooling(x, params);
  b.output(y, DType::f64);
  GraphRun run(build(b));
  run.set(x, xs);
  EXPECT_THAT(run.run(), IsOk());
  return run.get(y);
}

TEST(CpuReferencePooling, TwoDimensionalPoolingWithPaddingGivesHandComputedValues) {
  // x = 1..9 in a 3x3 plane; a 2x2 window at stride 1 with one element of padding all round: 4x4 windows.
  const std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const PoolingParams base{.window = {2, 2}, .stride = {1, 1}, .pre_padding = {1, 1}, .post_padding = {1, 1}};
  PoolingParams params = base;
  params.mode = PoolingMode::max;
  EXPECT_EQ(run_pooling({1, 1, 3, 3}, x, params),
            (std::vector<double>{1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 9, 9, 7, 8, 9, 9}));
  params.mode = PoolingMode::average_exclude_padding;
  EXPECT_EQ(run_pooling({1, 1, 3, 3}, x, params),
            (std::vector<double>{1, 1.5, 2.5, 3, 2.5, 3, 4, 4.5, 5.5, 6, 7, 7.5, 7, 7.5, 8.5, 9}));
  params.mode = PoolingMode::average_include_padding;
  EXPECT_EQ(run_pooling({1, 1, 3, 3}, x, params),
            (std::vector<double>{0.25, 0.75, 1.25, 0.75, 1.25, 3, 4, 2.25, 2.75, 6, 7, 3.75, 1.75, 3.75, 4.25, 2.25}));
}

TEST(CpuReferencePooling, OneAndThreeDimensionalPoolingGiveHandComputedValues) {
  // Windows of 3 at stride 2 over [pad, 1, 5, 2, 4, 3, pad]: {pad, 1, 5}, {5, 2, 4}, {4, 3, pad}.
  const std::vector<double> x{1, 5, 2, 4, 3};
  PoolingParams params{.mode = PoolingMode::max, .window = {3}, .stride = {2}, .pre_padding = {1}, .post_padding = {1}};
  EXPECT_EQ(run_pooling({1, 1, 5}, x, params), (std::vector<double>{5, 5, 4}));
  params.mode = PoolingMode::average_exclude_padding;
  expect_near_all(run_pooling({1, 1, 5}, x, params), {3, 11.0 / 3, 3.5}, 1e-15);
  params.mode = PoolingMode::average_include_padding;
  expect_near_all(run_pooling({1, 1, 5}, x, params), {2, 11.0 / 3, 7.0 / 3}, 1e-15);
  // 3-D: one 2x2x2 window over a 2x2x2 cube per channel, two channels.
  const std::vector<double> cubes{1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, -5, -6, -7, -8};
  EXPECT_EQ(run_pooling({1, 2, 2, 2, 2}, cubes, {.mode = PoolingMode::max, .window = {2, 2, 2}}),
            (std::vector<double>{8, -1}));
  EXPECT_EQ(run_pooling({1, 2, 2, 2, 2}, cubes, {.mode = PoolingMode::average_include_padding, .window = {2, 2, 2}}),
            (std::vector<double>{4.5, -4.5}));
}

}  // namespace
}  // namespace accel::dnn

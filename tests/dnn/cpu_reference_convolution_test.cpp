// The CPU reference's convolutions in every direction against hand-computed values, the naive formula and
// the adjoint identities (a backward convolution is the adjoint of the forward one), and a fused bias and relu.
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

// -- convolution -------------------------------------------------------------------------------------------

// A convolution problem of any spatial rank; the spatial lists have one entry per spatial dim.
struct ConvProblem {
  std::int64_t n = 1, c = 1, k = 1, groups = 1;
  std::vector<std::int64_t> input, filter, pre, post, stride, dilation;

  [[nodiscard]] std::size_t rank() const { return input.size(); }
  [[nodiscard]] std::int64_t output(std::size_t i) const {
    return (input[i] + pre[i] + post[i] - dilation[i] * (filter[i] - 1) - 1) / stride[i] + 1;
  }
  [[nodiscard]] std::vector<std::int64_t> x_dims() const { return with_spatial({n, c}, input); }
  [[nodiscard]] std::vector<std::int64_t> w_dims() const { return with_spatial({k, c / groups}, filter); }
  [[nodiscard]] std::vector<std::int64_t> y_dims() const {
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < rank(); ++i) out.push_back(output(i));
    return with_spatial({n, k}, out);
  }

 private:
  static std::vector<std::int64_t> with_spatial(std::vector<std::int64_t> front, const std::vector<std::int64_t>& s) {
    front.insert(front.end(), s.begin(), s.end());
    return front;
  }
};

std::int64_t product(const std::vector<std::int64_t>& dims) {
  std::int64_t p = 1;
  for (std::int64_t d : dims) p *= d;
  return p;
}

// y[n, k, o] = sum over the channels c of k's group and the filter taps f of
// x[n, c, o * stride - pre + f * dilation] * w[k, c - group start, f], reading 0 outside x. Spatial dims are
// taken as 3, the missing ones of extent 1.
std::vector<double> naive_conv(const ConvProblem& p, const std::vector<double>& x, const std::vector<double>& w) {
  std::array<std::int64_t, 3> in{1, 1, 1}, f{1, 1, 1}, out{1, 1, 1}, pre{}, stride{1, 1, 1}, dil{1, 1, 1};
  for (std::size_t i = 0; i < p.rank(); ++i) {
    in[i] = p.input[i], f[i] = p.filter[i], out[i] = p.output(i);
    pre[i] = p.pre[i], stride[i] = p.stride[i], dil[i] = p.dilation[i];
  }
  const std::int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  std::vector<double> y(p.n * p.k * out[0] * out[1] * out[2], 0.0);
  std::size_t at = 0;
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t k = 0; k < p.k; ++k)
      for (std::int64_t o0 = 0; o0 < out[0]; ++o0)
        for (std::int64_t o1 = 0; o1 < out[1]; ++o1)
          for (std::int64_t o2 = 0; o2 < out[2]; ++o2, ++at)
            for (std::int64_t c = 0; c < cg; ++c)
              for (std::int64_t f0 = 0; f0 < f[0]; ++f0)
                for (std::int64_t f1 = 0; f1 < f[1]; ++f1)
                  for (std::int64_t f2 = 0; f2 < f[2]; ++f2) {
                    const std::int64_t i0 = o0 * stride[0] - pre[0] + f0 * dil[0];
                    const std::int64_t i1 = o1 * stride[1] - pre[1] + f1 * dil[1];
                    const std::int64_t i2 = o2 * stride[2] - pre[2] + f2 * dil[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                    const std::int64_t channel = k / kg * cg + c;
                    y[at] += x[(((n * p.c + channel) * in[0] + i0) * in[1] + i1) * in[2] + i2] *
                             w[(((k * cg + c) * f[0] + f0) * f[1] + f1) * f[2] + f2];
                  }
  return y;
}

// The node the builder would make, written out: ConvParams holds initializer lists, which runtime problems
// cannot fill.
ConvolutionNode conv_node(const ConvProblem& p, ConvDirection direction, std::uint32_t a, std::uint32_t b,
                          std::uint32_t out) {
  ConvolutionNode node{
      .direction = direction, .spatial_rank = static_cast<std::uint8_t>(p.rank()), .a = a, .b = b, .out = out};
  for (std::size_t i = 0; i < p.rank(); ++i) {
    node.pre_padding[i] = p.pre[i];
    node.post_padding[i] = p.post[i];
    node.stride[i] = p.stride[i];
    node.dilation[i] = p.dilation[i];
  }
  return node;
}

TensorDesc packed(std::uint32_t uid, const std::vector<std::int64_t>& dims, DType dtype = DType::f64) {
  TensorDesc t{.uid = uid, .dtype = dtype, .rank = static_cast<std::uint8_t>(dims.size())};
  std::copy(dims.begin(), dims.end(), t.dims.begin());
  t.strides = packed_strides(dims, TensorLayout::channels_first);
  return t;
}

// One convolution in f64 between packed tensors: uid 1 is a, 2 is b, 3 is out.
std::shared_ptr<const Graph> conv_graph(const ConvProblem& p, ConvDirection direction) {
  std::vector<TensorDesc> tensors;
  switch (direction) {
    case ConvDirection::forward: tensors = {packed(1, p.x_dims()), packed(2, p.w_dims()), packed(3, p.y_dims())}; break;
    case ConvDirection::backward_data:
      tensors = {packed(1, p.y_dims()), packed(2, p.w_dims()), packed(3, p.x_dims())};
      break;
    case ConvDirection::backward_filter:
      tensors = {packed(1, p.x_dims()), packed(2, p.y_dims()), packed(3, p.w_dims())};
      break;
  }
  Result<std::shared_ptr<const Graph>> graph = Graph::create(tensors, {conv_node(p, direction, 1, 2, 3)});
  EXPECT_THAT(graph, IsOk());
  return graph.ok() ? *graph : nullptr;
}

std::vector<double> run_conv(const ConvProblem& p, ConvDirection direction, const std::vector<double>& a,
                             const std::vector<double>& b) {
  std::shared_ptr<const Graph> graph = conv_graph(p, direction);
  if (graph == nullptr) return {};
  GraphRun run(graph);
  run.set({1}, a);
  run.set({2}, b);
  EXPECT_THAT(run.run(), IsOk());
  return run.get({3});
}

const std::vector<ConvProblem> kConvProblems = {
    {.n = 2, .c = 3, .k = 4, .input = {9}, .filter = {3}, .pre = {2}, .post = {1}, .stride = {2}, .dilation = {2}},
    {.n = 2,
     .c = 4,
     .k = 6,
     .groups = 2,
     .input = {7, 6},
     .filter = {3, 2},
     .pre = {1, 0},
     .post = {2, 1},
     .stride = {2, 1},
     .dilation = {1, 2}},
    {.n = 1,
     .c = 6,
     .k = 3,
     .groups = 3,
     .input = {5, 5},
     .filter = {1, 1},
     .pre = {0, 0},
     .post = {0, 0},
     .stride = {3, 2},
     .dilation = {1, 1}},
    {.n = 2,
     .c = 2,
     .k = 2,
     .input = {4, 5, 3},
     .filter = {2, 3, 2},
     .pre = {1, 0, 1},
     .post = {0, 2, 1},
     .stride = {1, 2, 2},
     .dilation = {2, 1, 1}},
};

TEST(CpuReferenceConvolution, AOneDimensionalConvolutionOfKnownNumbersGivesHandComputedValues) {
  // w = [1, 0, -1] is a central difference; padding reads 0 past both ends.
  const ConvProblem p{.input = {5}, .filter = {3}, .pre = {1}, .post = {1}, .stride = {1}, .dilation = {1}};
  EXPECT_EQ(run_conv(p, ConvDirection::forward, {1, 2, 3, 4, 5}, {1, 0, -1}), (std::vector<double>{-2, -2, -2, -2, 4}));
}

TEST(CpuReferenceConvolution, ForwardMatchesTheNaiveFormulaWithPaddingStrideDilationAndGroups) {
  std::uint32_t seed = 1;
  for (const ConvProblem& p : kConvProblems) {
    const std::vector<double> x = random_values(product(p.x_dims()), seed++);
    const std::vector<double> w = random_values(product(p.w_dims()), seed++);
    expect_near_all(run_conv(p, ConvDirection::forward, x, w), naive_conv(p, x, w), 1e-12);
  }
}

TEST(CpuReferenceConvolution, BackwardDataAndBackwardFilterAreTheAdjointsOfForward) {
  // <conv(x, w), dy> = <x, dgrad(dy, w)> = <w, wgrad(x, dy)> for every x, w and dy.
  std::uint32_t seed = 100;
  for (const ConvProblem& p : kConvProblems) {
    const std::vector<double> x = random_values(product(p.x_dims()), seed++);
    const std::vector<double> w = random_values(product(p.w_dims()), seed++);
    const std::vector<double> dy = random_values(product(p.y_dims()), seed++);
    const double forward = dot(run_conv(p, ConvDirection::forward, x, w), dy);
    const double data = dot(x, run_conv(p, ConvDirection::backward_data, dy, w));
    const double filter = dot(w, run_conv(p, ConvDirection::backward_filter, x, dy));
    EXPECT_NEAR(data, forward, 1e-12 * (1 + std::abs(forward)));
    EXPECT_NEAR(filter, forward, 1e-12 * (1 + std::abs(forward)));
  }
}

TEST(CpuReferenceConvolution, NchwNhwcAndAnOddStridedLayoutGiveIdenticalResults) {
  const std::vector<double> x = random_values(2 * 3 * 5 * 4, 7), w = random_values(4 * 3 * 3 * 3, 8);
  std::vector<std::vector<double>> results;
  // Odd: W outermost within a sample, C innermost, rows padded by 2 and samples by 5 elements.
  const std::vector<std::int64_t> x_dims{2, 3, 5, 4}, x_odd{75, 1, 14, 3};
  const std::vector<std::int64_t> w_dims{4, 3, 3, 3}, w_odd{1, 4, 36, 12};
  for (int layout = 0; layout < 3; ++layout) {
    GraphBuilder b;
    TensorRef xr, wr;
    if (layout == 2) {
      xr = b.tensor(DType::f32, x_dims, x_odd);
      wr = b.tensor(DType::f32, w_dims, w_odd);
    } else {
      const auto order = layout == 0 ? TensorLayout::channels_first : TensorLayout::channels_last;
      xr = b.tensor(DType::f32, {2, 3, 5, 4}, order);
      wr = b.tensor(DType::f32, {4, 3, 3, 3}, order);
    }
    const TensorRef y = b.conv_forward(xr, wr, {.pre_padding = {1, 1}, .post_padding = {1, 0}, .stride = {2, 1}});
    b.output(y, DType::f32, layout == 1 ? TensorLayout::channels_last : TensorLayout::channels_first);
    GraphRun run(build(b));
    run.set(xr, x);
    run.set(wr, w);
    ASSERT_THAT(run.run(), IsOk());
    results.push_back(run.get(y));
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

TEST(CpuReferenceGraph, AConvolutionWithAFusedBiasAndReluMatchesTheNaiveFormula) {
  const ConvProblem p{.n = 2,
                      .c = 16,
                      .k = 16,
                      .input = {16, 16},
                      .filter = {3, 3},
                      .pre = {1, 1},
                      .post = {1, 1},
                      .stride = {1, 1},
                      .dilation = {1, 1}};
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {2, 16, 16, 16}, TensorLayout::channels_last);
  const TensorRef w = b.tensor(DType::f32, {16, 16, 3, 3}, TensorLayout::channels_last);
  const TensorRef bias = b.tensor(DType::f32, {1, 16, 1, 1});
  const TensorRef y = b.relu(b.add(b.conv_forward(x, w, {.pre_padding = {1, 1}, .post_padding = {1, 1}}), bias));
  b.output(y, DType::f32, TensorLayout::channels_last);
  GraphRun run(build(b));
  const std::vector<double> xs = random_values(2 * 16 * 16 * 16, 11), ws = random_values(16 * 16 * 9, 12);
  const std::vector<double> biases = random_values(16, 13);
  run.set(x, xs);
  run.set(w, ws);
  run.set(bias, biases);
  ASSERT_THAT(run.run(), IsOk());
  // The inputs went through f32: so must the naive formula's.
  auto through_f32 = [](std::vector<double> v) {
    for (double& e : v) e = static_cast<float>(e);
    return v;
  };
  std::vector<double> want = naive_conv(p, through_f32(xs), through_f32(ws));
  for (std::size_t i = 0; i < want.size(); ++i) {
    want[i] = std::max(0.0, want[i] + static_cast<float>(biases[i / 256 % 16]));
  }
  expect_near_all(run.get(y), want, 1e-5);
}

}  // namespace
}  // namespace accel::dnn

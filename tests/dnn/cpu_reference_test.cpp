// The CPU reference of operation graphs against hand-computed values, naive formulas written here, and
// identities (a backward convolution is the adjoint of the forward one). Tensors are filled and read through
// their strides and dtypes by this file's own code, not the interpreter's.
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
#include "testing/status_matchers.hpp"

namespace accel::dnn {
namespace {

using testing::IsOk;
using testing::StatusIs;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::shared_ptr<const Graph> build(GraphBuilder& builder) {
  Result<std::shared_ptr<const Graph>> graph = builder.build();
  EXPECT_THAT(graph, IsOk());
  return graph.ok() ? *graph : nullptr;
}

// Offset in storage of the element at row-major position `linear` of the logical dims.
std::int64_t storage_offset(const TensorDesc& t, std::int64_t linear) {
  std::int64_t offset = 0;
  for (std::size_t d = t.rank; d-- > 0;) {
    offset += (linear % t.dims[d]) * t.strides[d];
    linear /= t.dims[d];
  }
  return offset;
}

void encode(DType dtype, double value, std::byte* at) {
  auto put = [&](auto v) { std::memcpy(at, &v, sizeof(v)); };
  switch (dtype) {
    case DType::f32: return put(static_cast<float>(value));
    case DType::f64: return put(value);
    case DType::f16: return put(to_half(static_cast<float>(value)));
    case DType::bf16: return put(to_bfloat16(static_cast<float>(value)));
    case DType::i32: return put(static_cast<std::int32_t>(value));
    default: FAIL() << "the test does not write " << to_string(dtype);
  }
}

double decode(DType dtype, const std::byte* at) {
  auto get = [&](auto v) {
    std::memcpy(&v, at, sizeof(v));
    return v;
  };
  switch (dtype) {
    case DType::f32: return get(float{});
    case DType::f64: return get(double{});
    case DType::f16: return to_float(get(Half{}));
    case DType::bf16: return to_float(get(BFloat16{}));
    default: ADD_FAILURE() << "the test does not read " << to_string(dtype); return 0;
  }
}

// Memory for every bound tensor of a graph, each filled with a marker byte so that writes outside a tensor's
// elements show.
class GraphRun {
 public:
  static constexpr std::byte kMarker{0xA5};

  explicit GraphRun(std::shared_ptr<const Graph> graph) : graph_(std::move(graph)) {
    for (std::uint32_t uid : graph_->bound_uids()) {
      const TensorDesc& t = *graph_->find(uid);
      memory_[uid].assign(storage_extent(t) * size_of(t.dtype), kMarker);
    }
  }

  void set(TensorRef ref, const std::vector<double>& values) {
    const TensorDesc& t = *graph_->find(ref.uid);
    ASSERT_EQ(values.size(), element_count(t)) << "tensor " << ref.uid;
    for (std::size_t i = 0; i < values.size(); ++i) {
      encode(t.dtype, values[i], memory_.at(ref.uid).data() + storage_offset(t, i) * size_of(t.dtype));
    }
  }

  [[nodiscard]] std::vector<double> get(TensorRef ref) const {
    const TensorDesc& t = *graph_->find(ref.uid);
    std::vector<double> values(element_count(t));
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = decode(t.dtype, memory_.at(ref.uid).data() + storage_offset(t, i) * size_of(t.dtype));
    }
    return values;
  }

  [[nodiscard]] std::vector<std::pair<std::uint32_t, cpu::HostTensor>> bindings() {
    std::vector<std::pair<std::uint32_t, cpu::HostTensor>> bound;
    for (auto& [uid, bytes] : memory_) {
      const DType dtype = graph_->find(uid)->dtype;
      bound.push_back({uid, {.data = bytes.data(), .dtype = dtype, .count = bytes.size() / size_of(dtype)}});
    }
    return bound;
  }

  [[nodiscard]] Status run() { return cpu::run_graph(*graph_, bindings()); }
  [[nodiscard]] const Graph& graph() const { return *graph_; }

 private:
  std::shared_ptr<const Graph> graph_;
  std::map<std::uint32_t, std::vector<std::byte>> memory_;
};

std::vector<double> random_values(std::size_t count, std::uint32_t seed, double low = -1, double high = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<double> values(count);
  for (double& v : values) v = dist(rng);
  return values;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << "element " << i;
}

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

// -- element types -----------------------------------------------------------------------------------------

std::vector<double> stored_as(DType dtype, const std::vector<double>& values) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f64, {static_cast<std::int64_t>(values.size())});
  const TensorRef y = b.pointwise(PointwiseMode::identity, x);
  b.output(y, dtype);
  GraphRun run(build(b));
  run.set(x, values);
  EXPECT_THAT(run.run(), IsOk());
  return run.get(y);
}

TEST(CpuReferenceDtypes, HalfOutputsRoundToNearestEvenFromTheExactValue) {
  const double ulp = std::ldexp(1.0, -10);  // of f16 at 1
  EXPECT_EQ(stored_as(DType::f16,
                      {
                          1 + ulp / 2,                         // a tie: to the even 1
                          1 + 3 * ulp / 2,                     // a tie: to the even 1 + 2 ulp
                          1 + ulp / 2 + std::ldexp(1.0, -30),  // just above a tie, below f32's precision
                          65520,                               // halfway to the next binade: overflows
                          std::ldexp(1.0, -25),                // half the least subnormal: to the even 0
                          std::ldexp(1.0, -25) + std::ldexp(1.0, -40),
                      }),
            (std::vector<double>{1, 1 + 2 * ulp, 1 + ulp, kInfinity, 0, std::ldexp(1.0, -24)}));
}

TEST(CpuReferenceDtypes, Bfloat16OutputsRoundToNearestEvenFromTheExactValue) {
  const double ulp = std::ldexp(1.0, -7);
  EXPECT_EQ(stored_as(DType::bf16, {1 + ulp / 2, 1 + 3 * ulp / 2, 1 + ulp / 2 + std::ldexp(1.0, -40), -3}),
            (std::vector<double>{1, 1 + 2 * ulp, 1 + ulp, -3}));
}

TEST(CpuReferenceDtypes, VirtualTensorsKeepFullPrecisionBetweenFusedOps) {
  // 1 + 2^-40 exists only in the virtual sum; rounded to its nominal f32 it would be 1, and the result 0.
  GraphBuilder b;
  const TensorRef one = b.tensor(DType::f64, {1});
  const TensorRef tiny = b.tensor(DType::f64, {1});
  const TensorRef y = b.pointwise(PointwiseMode::sub, b.add(one, tiny), one);
  b.output(y, DType::f64);
  GraphRun run(build(b));
  run.set(one, {1});
  run.set(tiny, {std::ldexp(1.0, -40)});
  ASSERT_THAT(run.run(), IsOk());
  EXPECT_EQ(run.get(y), (std::vector<double>{std::ldexp(1.0, -40)}));
}

TEST(CpuReferenceDtypes, HalfAndBfloat16InputsAreReadExactly) {
  GraphBuilder b;
  const TensorRef h = b.tensor(DType::f16, {3});
  const TensorRef bf = b.tensor(DType::bf16, {3});
  const TensorRef y = b.add(h, bf);
  b.output(y, DType::f64);
  GraphRun run(build(b));
  run.set(h, {1 + std::ldexp(1.0, -10), -2, 65504});
  run.set(bf, {std::ldexp(1.0, -7), 0.5, 0});
  ASSERT_THAT(run.run(), IsOk());
  EXPECT_EQ(run.get(y), (std::vector<double>{1 + std::ldexp(1.0, -10) + std::ldexp(1.0, -7), -1.5, 65504}));
}

// -- refusals ----------------------------------------------------------------------------------------------

class CpuReferenceBindings : public ::testing::Test {
 protected:
  void SetUp() override {
    GraphBuilder b;
    x_ = b.tensor(DType::f32, {2, 3});
    y_ = b.relu(x_);
    b.output(y_, DType::f32);
    graph_ = build(b);
    ASSERT_NE(graph_, nullptr);
  }

  std::shared_ptr<const Graph> graph_;
  TensorRef x_, y_;
  std::vector<float> x_memory_ = std::vector<float>(6, 1.0f), y_memory_ = std::vector<float>(6, 0.0f);
};

TEST_F(CpuReferenceBindings, AMissingBindingIsRefusedNamingTheTensor) {
  const std::vector<std::pair<std::uint32_t, cpu::HostTensor>> bound{
      {x_.uid, {.data = x_memory_.data(), .dtype = DType::f32, .count = 6}}};
  EXPECT_THAT(cpu::run_graph(*graph_, bound),
              StatusIs(Code::invalid_argument, "tensor " + std::to_string(y_.uid) + " is not bound"));
}

TEST_F(CpuReferenceBindings, MemoryShortOfTheStorageExtentIsRefusedNamingTheTensor) {
  const std::vector<std::pair<std::uint32_t, cpu::HostTensor>> bound{
      {x_.uid, {.data = x_memory_.data(), .dtype = DType::f32, .count = 5}},
      {y_.uid, {.data = y_memory_.data(), .dtype = DType::f32, .count = 6}}};
  EXPECT_THAT(cpu::run_graph(*graph_, bound), StatusIs(Code::invalid_argument, "tensor " + std::to_string(x_.uid)));
  EXPECT_EQ(y_memory_, std::vector<float>(6, 0.0f)) << "nothing runs before every binding is checked";
}

TEST_F(CpuReferenceBindings, ADtypeOtherThanTheTensorsIsRefusedNamingTheTensor) {
  const std::vector<std::pair<std::uint32_t, cpu::HostTensor>> bound{
      {x_.uid, {.data = x_memory_.data(), .dtype = DType::f32, .count = 6}},
      {y_.uid, {.data = y_memory_.data(), .dtype = DType::i32, .count = 6}}};
  EXPECT_THAT(cpu::run_graph(*graph_, bound), StatusIs(Code::invalid_argument, "tensor " + std::to_string(y_.uid)));
}

TEST_F(CpuReferenceBindings, UnknownRepeatedAndNullBindingsAreRefused) {
  const cpu::HostTensor x{.data = x_memory_.data(), .dtype = DType::f32, .count = 6};
  const cpu::HostTensor y{.data = y_memory_.data(), .dtype = DType::f32, .count = 6};
  using Bound = std::vector<std::pair<std::uint32_t, cpu::HostTensor>>;
  EXPECT_THAT(cpu::run_graph(*graph_, Bound{{x_.uid, x}, {y_.uid, y}, {99, y}}),
              StatusIs(Code::invalid_argument, "uid 99"));
  EXPECT_THAT(cpu::run_graph(*graph_, Bound{{x_.uid, x}, {y_.uid, y}, {x_.uid, x}}),
              StatusIs(Code::invalid_argument, "twice"));
  EXPECT_THAT(cpu::run_graph(*graph_, Bound{{x_.uid, {.dtype = DType::f32, .count = 6}}, {y_.uid, y}}),
              StatusIs(Code::invalid_argument, "null"));
  EXPECT_THAT(cpu::run_graph(*graph_, Bound{{x_.uid, x}, {y_.uid, y}}), IsOk());
  EXPECT_EQ(y_memory_, std::vector<float>(6, 1.0f));
}

TEST(CpuReferenceRefusals, AnIntegerOutputIsNotSupported) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {4});
  const TensorRef y = b.relu(x);
  b.output(y, DType::i32);
  GraphRun run(build(b));
  EXPECT_THAT(run.run(), StatusIs(Code::not_supported, "tensor " + std::to_string(y.uid)));
}

}  // namespace
}  // namespace accel::dnn

// Convolutions and operation graphs through the Device API on the CPU device, in this process and in an
// isolated worker process: the fused convolution request against the same graph built by hand and against its
// unfused steps, the isolated device against the in-process one bit for bit, and the errors of bad requests.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/dnn/convolution.hpp"
#include "accel/dnn/graph.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using dnn::GraphBuilder;
using dnn::TensorBinding;
using dnn::TensorLayout;
using dnn::TensorRef;
using testing::IsOk;
using testing::StatusIs;

constexpr float kUnwritten = std::numeric_limits<float>::quiet_NaN();

DeviceOptions options_for(Isolation isolation) {
  return DeviceOptions{.kind = DeviceKind::cpu, .isolation = isolation};
}

std::vector<float> random_floats(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = uniform(rng);
  return values;
}

std::vector<std::uint32_t> bits(const std::vector<float>& values) {
  std::vector<std::uint32_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = std::bit_cast<std::uint32_t>(values[i]);
  return out;
}

void expect_near(const std::vector<float>& actual, const std::vector<double>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance * std::max(1.0, std::abs(expected[i]))) << "element " << i;
  }
}

template <class T>
Buffer<T> put(const Device& dev, const std::vector<T>& host) {
  Result<Buffer<T>> buffer = dev.allocate<T>(host.size()).wait();
  EXPECT_THAT(buffer, IsOk());
  if (!buffer.ok()) return {};
  EXPECT_THAT(dev.upload(std::span<const T>(host), *buffer).wait(), IsOk());
  return *buffer;
}

template <class T>
std::vector<T> get(const Device& dev, const Buffer<T>& buffer) {
  std::vector<T> host(buffer.size());
  EXPECT_THAT(dev.download(buffer, std::span<T>(host)).wait(), IsOk());
  return host;
}

std::shared_ptr<const dnn::Graph> build(GraphBuilder& builder) {
  Result<std::shared_ptr<const dnn::Graph>> graph = builder.build();
  EXPECT_THAT(graph, IsOk());
  return graph.ok() ? *graph : nullptr;
}

using Tensors = std::map<std::uint32_t, std::vector<float>>;

// Runs an all-f32 graph: every input from `inputs`, every output read back (outputs start as NaN, so an
// element the graph does not write shows).
Tensors run_graph(const Device& dev, const std::shared_ptr<const dnn::Graph>& graph, const Tensors& inputs) {
  Tensors outputs;
  if (graph == nullptr) {
    ADD_FAILURE() << "no graph";
    return outputs;
  }
  std::map<std::uint32_t, Buffer<float>> buffers;
  std::vector<TensorBinding> bindings;
  for (std::uint32_t uid : graph->bound_uids()) {
    const dnn::TensorDesc& t = *graph->find(uid);
    EXPECT_EQ(t.dtype, DType::f32) << "uid " << uid;
    const std::uint64_t extent = dnn::storage_extent(t);
    if (graph->writes(uid)) {
      buffers[uid] = put(dev, std::vector<float>(extent, kUnwritten));
    } else {
      auto it = inputs.find(uid);
      if (it == inputs.end() || it->second.size() != extent) {
        ADD_FAILURE() << "input %" << uid << " needs " << extent << " values";
        return outputs;
      }
      buffers[uid] = put(dev, it->second);
    }
    bindings.push_back({uid, buffers[uid]});
  }
  EXPECT_THAT(dev.ask(RunGraph{graph, bindings}).wait(), IsOk());
  for (std::uint32_t uid : graph->bound_uids())
    if (graph->writes(uid)) outputs[uid] = get(dev, buffers[uid]);
  return outputs;
}

// -- the fused convolution ---------------------------------------------------------------------------------

// NHWC, 2 groups, asymmetric padding, stride and dilation: y [2, 6, 5, 2].
ConvShape fused_shape() {
  return ConvShape{.spatial_rank = 2,
                   .layout = TensorLayout::channels_last,
                   .dtype = DType::f32,
                   .n = 2,
                   .c = 4,
                   .k = 6,
                   .groups = 2,
                   .input = {5, 6, 0},
                   .filter = {3, 3, 0},
                   .pre_padding = {1, 0, 0},
                   .post_padding = {1, 2, 0},
                   .stride = {1, 2, 1},
                   .dilation = {1, 2, 1}};
}

// conv(x, w) + bias in double, NHWC x and y, KRSC w (the packed channels_last filter).
std::vector<double> reference_conv_bias(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                                        const std::vector<float>& bias) {
  const std::int64_t H = s.input[0], W = s.input[1], R = s.filter[0], S = s.filter[1];
  const std::int64_t P = (H + s.pre_padding[0] + s.post_padding[0] - (s.dilation[0] * (R - 1) + 1)) / s.stride[0] + 1;
  const std::int64_t Q = (W + s.pre_padding[1] + s.post_padding[1] - (s.dilation[1] * (S - 1) + 1)) / s.stride[1] + 1;
  const std::int64_t cg = s.c / s.groups, kg = s.k / s.groups;
  std::vector<double> y(s.n * P * Q * s.k);
  for (std::int64_t n = 0; n < s.n; ++n)
    for (std::int64_t p = 0; p < P; ++p)
      for (std::int64_t q = 0; q < Q; ++q)
        for (std::int64_t k = 0; k < s.k; ++k) {
          const std::int64_t g = k / kg;
          double sum = bias[k];
          for (std::int64_t r = 0; r < R; ++r)
            for (std::int64_t t = 0; t < S; ++t) {
              const std::int64_t h = p * s.stride[0] - s.pre_padding[0] + r * s.dilation[0];
              const std::int64_t v = q * s.stride[1] - s.pre_padding[1] + t * s.dilation[1];
              if (h < 0 || h >= H || v < 0 || v >= W) continue;
              for (std::int64_t c = 0; c < cg; ++c) {
                sum += double{x[((n * H + h) * W + v) * s.c + g * cg + c]} * double{w[((k * R + r) * S + t) * cg + c]};
              }
            }
          y[((n * P + p) * Q + q) * s.k + k] = sum;
        }
  return y;
}

class CpuDnnDeviceTest : public ::testing::TestWithParam<Isolation> {
 protected:
  void SetUp() override {
    Result<Device> device = Device::open(system_, options_for(GetParam()));
    ASSERT_THAT(device, IsOk());
    dev_ = *device;
  }
  System system_;
  std::optional<Device> dev_;
};

TEST_P(CpuDnnDeviceTest, AFusedConvolutionEqualsItsGraphAndItsUnfusedSteps) {
  const Device& dev = *dev_;
  const ConvShape shape = fused_shape();
  const std::vector<float> x = random_floats(2 * 4 * 5 * 6, 1);
  const std::vector<float> w = random_floats(6 * 2 * 3 * 3, 2);
  const std::vector<float> bias = random_floats(6, 3);
  constexpr std::size_t kY = 2 * 6 * 5 * 2;

  // The request.
  Buffer<float> dx = put(dev, x), dw = put(dev, w), dbias = put(dev, bias);
  Buffer<float> dy = put(dev, std::vector<float>(kY, kUnwritten));
  ASSERT_THAT(dev.ask(ConvFwd{.shape = shape,
                              .x = dx,
                              .w = dw,
                              .y = dy,
                              .bias = dbias,
                              .epilogue = {.activation = Activation::relu, .bias = BiasVector::per_channel}})
                  .wait(),
              IsOk());
  const std::vector<float> fused = get(dev, dy);

  std::vector<double> expected = reference_conv_bias(shape, x, w, bias);
  ASSERT_EQ(expected.size(), kY);
  std::size_t negative = 0;
  for (double& v : expected) {
    negative += v < 0 ? 1 : 0;
    v = std::max(v, 0.0);
  }
  EXPECT_GT(negative, kY / 10) << "the test's data should exercise the relu";
  EXPECT_LT(negative, kY - kY / 10);
  expect_near(fused, expected, 1e-5);

  // The same graph, built by hand.
  GraphBuilder b;
  const TensorRef gx = b.tensor(DType::f32, {2, 4, 5, 6}, TensorLayout::channels_last);
  const TensorRef gw = b.tensor(DType::f32, {6, 2, 3, 3}, TensorLayout::channels_last);
  const TensorRef gbias = b.tensor(DType::f32, {1, 6, 1, 1});
  const TensorRef gy = b.relu(b.add(
      b.conv_forward(gx, gw, {.pre_padding = {1, 0}, .post_padding = {1, 2}, .stride = {1, 2}, .dilation = {1, 2}}),
      gbias));
  b.output(gy, DType::f32, TensorLayout::channels_last);
  const Tensors by_graph = run_graph(dev, build(b), {{gx.uid, x}, {gw.uid, w}, {gbias.uid, bias}});
  ASSERT_TRUE(by_graph.contains(gy.uid));
  EXPECT_EQ(bits(by_graph.at(gy.uid)), bits(fused));

  // Unfused: the convolution, then the bias, then the relu, each a graph of its own with its result in memory.
  GraphBuilder conv;
  const TensorRef cx = conv.tensor(DType::f32, {2, 4, 5, 6}, TensorLayout::channels_last);
  const TensorRef cw = conv.tensor(DType::f32, {6, 2, 3, 3}, TensorLayout::channels_last);
  const TensorRef cy =
      conv.conv_forward(cx, cw, {.pre_padding = {1, 0}, .post_padding = {1, 2}, .stride = {1, 2}, .dilation = {1, 2}});
  conv.output(cy, DType::f32, TensorLayout::channels_last);
  const Tensors step1 = run_graph(dev, build(conv), {{cx.uid, x}, {cw.uid, w}});
  ASSERT_TRUE(step1.contains(cy.uid));

  GraphBuilder add;
  const TensorRef at = add.tensor(DType::f32, {2, 6, 5, 2}, TensorLayout::channels_last);
  const TensorRef abias = add.tensor(DType::f32, {1, 6, 1, 1});
  const TensorRef ay = add.add(at, abias);
  add.output(ay, DType::f32, TensorLayout::channels_last);
  const Tensors step2 = run_graph(dev, build(add), {{at.uid, step1.at(cy.uid)}, {abias.uid, bias}});
  ASSERT_TRUE(step2.contains(ay.uid));

  GraphBuilder relu;
  const TensorRef rt = relu.tensor(DType::f32, {2, 6, 5, 2}, TensorLayout::channels_last);
  const TensorRef ry = relu.relu(rt);
  relu.output(ry, DType::f32, TensorLayout::channels_last);
  const Tensors step3 = run_graph(dev, build(relu), {{rt.uid, step2.at(ay.uid)}});
  ASSERT_TRUE(step3.contains(ry.uid));
  // Each step rounds its result to f32; the fused graph rounds once.
  std::vector<double> fused_double(fused.begin(), fused.end());
  expect_near(step3.at(ry.uid), fused_double, 1e-6);
}

TEST_P(CpuDnnDeviceTest, EveryEpilogueMatchesItsReference) {
  const Device& dev = *dev_;
  const ConvShape shape = fused_shape();
  const std::vector<float> x = random_floats(2 * 4 * 5 * 6, 4);
  const std::vector<float> w = random_floats(6 * 2 * 3 * 3, 5);
  const std::vector<float> bias = random_floats(6, 6);
  const std::vector<double> conv_bias = reference_conv_bias(shape, x, w, bias);
  const std::vector<double> conv_only = reference_conv_bias(shape, x, w, std::vector<float>(6, 0.0f));
  Buffer<float> dx = put(dev, x), dw = put(dev, w), dbias = put(dev, bias);
  std::vector<Epilogue> epilogues{{}};
  for (Activation activation : {Activation::identity, Activation::relu, Activation::sigmoid, Activation::tanh,
                                Activation::gelu_erf, Activation::silu}) {
    epilogues.push_back({.activation = activation, .bias = BiasVector::per_channel});
  }
  for (const Epilogue& epilogue : epilogues) {
    SCOPED_TRACE(to_string(epilogue));
    Buffer<float> dy = put(dev, std::vector<float>(conv_bias.size(), kUnwritten));
    ConvFwd request{.shape = shape, .x = dx, .w = dw, .y = dy, .epilogue = epilogue};
    if (epilogue.has_bias()) request.bias = dbias;
    ASSERT_THAT(dev.ask(request).wait(), IsOk());
    std::vector<double> expected = epilogue.has_bias() ? conv_bias : conv_only;
    for (double& v : expected) v = activate(epilogue.activation, v);
    expect_near(get(dev, dy), expected, 1e-5);
  }
}

TEST_P(CpuDnnDeviceTest, EpiloguesCuDnnDoesNotFuseAreNotSupported) {
  const Device& dev = *dev_;
  const ConvShape shape = fused_shape();
  Buffer<float> x = put(dev, std::vector<float>(2 * 4 * 5 * 6, 0.0f));
  Buffer<float> w = put(dev, std::vector<float>(6 * 2 * 3 * 3, 0.0f));
  Buffer<float> y = put(dev, std::vector<float>(240, 0.0f)), bias = put(dev, std::vector<float>(6, 0.0f));
  const auto run = [&](Epilogue epilogue) {
    return dev.ask(ConvFwd{.shape = shape, .x = x, .w = w, .y = y, .bias = bias, .epilogue = epilogue}).wait();
  };
  EXPECT_THAT(run({.activation = Activation::gelu_tanh, .bias = BiasVector::per_channel}),
              StatusIs(Code::not_supported, "gelu_tanh"));
  EXPECT_THAT(run({.activation = Activation::relu}), StatusIs(Code::not_supported, "only after a per_channel bias"));
  EXPECT_THAT(run({.bias = BiasVector::per_column}), StatusIs(Code::not_supported, "per_column bias"));
}

// -- errors ------------------------------------------------------------------------------------------------

TEST_P(CpuDnnDeviceTest, BadGraphRequestsAreClearErrors) {
  const Device& dev = *dev_;
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {2, 3});
  const TensorRef y = b.relu(x);
  b.output(y, DType::f32);
  const std::shared_ptr<const dnn::Graph> graph = build(b);
  ASSERT_NE(graph, nullptr);
  Buffer<float> bx = put(dev, std::vector<float>{-1, 2, -3, 4, -5, 6});
  Buffer<float> by = put(dev, std::vector<float>(6, kUnwritten));
  Buffer<float> extra = put(dev, std::vector<float>(6, 0.0f));
  Buffer<float> small = put(dev, std::vector<float>(5, 0.0f));
  Buffer<double> wide = put(dev, std::vector<double>(6, 0.0));

  EXPECT_THAT(dev.ask(RunGraph{graph, {{x.uid, bx}}}).wait(), StatusIs(Code::invalid_argument, "not bound"));
  EXPECT_THAT(dev.ask(RunGraph{graph, {{x.uid, bx}, {y.uid, by}, {99, extra}}}).wait(),
              StatusIs(Code::invalid_argument, "uid 99"));
  EXPECT_THAT(dev.ask(RunGraph{graph, {{x.uid, bx}, {y.uid, wide}}}).wait(),
              StatusIs(Code::invalid_argument, "holds f64"));
  EXPECT_THAT(dev.ask(RunGraph{graph, {{x.uid, small}, {y.uid, by}}}).wait(),
              StatusIs(Code::invalid_argument, "lie outside"));
  EXPECT_THAT(dev.ask(RunGraph{graph, {{x.uid, bx}, {y.uid, bx}}}).wait(), StatusIs(Code::invalid_argument, "shares"));
  EXPECT_THAT(dev.ask(RunGraph{graph, {{x.uid, bx}, {x.uid, bx}, {y.uid, by}}}).wait(),
              StatusIs(Code::invalid_argument, "bound twice"));
  EXPECT_THAT(dev.ask(RunGraph{nullptr, {}}).wait(), StatusIs(Code::invalid_argument, "without a graph"));

  Result<BufferHandle> freed = dev.ask(Allocate{.dtype = DType::f32, .count = 6}).wait();
  ASSERT_THAT(freed, IsOk());
  ASSERT_THAT(dev.free(*freed).wait(), IsOk());
  EXPECT_THAT(dev.ask(RunGraph{graph, {{x.uid, bx}, {y.uid, *freed}}}).wait(), StatusIs(Code::stale_handle));
  EXPECT_THAT(dev.ask(RunGraph{graph, {{x.uid, *freed}, {y.uid, by}}}).wait(), StatusIs(Code::stale_handle));

  // No refused request wrote its output.
  EXPECT_EQ(bits(get(dev, by)), bits(std::vector<float>(6, kUnwritten)));
  // The device still serves.
  ASSERT_THAT(dev.ask(RunGraph{graph, {{y.uid, by}, {x.uid, bx}}}).wait(), IsOk());
  EXPECT_EQ(get(dev, by), (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

TEST_P(CpuDnnDeviceTest, BadConvolutionShapesAreClearErrors) {
  const Device& dev = *dev_;
  ConvShape shape = fused_shape();
  shape.groups = 3;  // does not divide c = 4
  Buffer<float> x = put(dev, std::vector<float>(240, 1.0f));
  Buffer<float> w = put(dev, std::vector<float>(216, 1.0f));
  Buffer<float> y = put(dev, std::vector<float>(240, kUnwritten));
  Buffer<float> bias = put(dev, std::vector<float>(6, 0.0f));
  EXPECT_THAT(dev.ask(ConvFwd{.shape = shape, .x = x, .w = w, .y = y}).wait(),
              StatusIs(Code::invalid_argument, "groups"));
  EXPECT_THAT(dev.ask(ConvBwdData{.shape = shape, .dy = y, .w = w, .dx = x}).wait(),
              StatusIs(Code::invalid_argument, "groups"));
  EXPECT_THAT(dev.ask(ConvBwdFilter{.shape = shape, .x = x, .dy = y, .dw = w}).wait(),
              StatusIs(Code::invalid_argument, "groups"));

  shape = fused_shape();
  shape.dtype = DType::i32;
  Buffer<std::int32_t> ix = put(dev, std::vector<std::int32_t>(240, 1));
  Buffer<std::int32_t> iw = put(dev, std::vector<std::int32_t>(108, 1));
  Buffer<std::int32_t> iy = put(dev, std::vector<std::int32_t>(120, 0));
  EXPECT_THAT(dev.ask(ConvFwd{.shape = shape, .x = ix, .w = iw, .y = iy}).wait(), StatusIs(Code::not_supported, "i32"));
  EXPECT_THAT(dev.ask(ConvBwdFilter{.shape = shape, .x = ix, .dy = iy, .dw = iw}).wait(),
              StatusIs(Code::not_supported, "i32"));

  // Buffers that do not fit the shape.
  shape = fused_shape();
  Buffer<float> short_y = put(dev, std::vector<float>(119, 0.0f));
  EXPECT_THAT(dev.ask(ConvFwd{.shape = shape, .x = x, .w = w, .y = short_y}).wait(),
              StatusIs(Code::invalid_argument, "lie outside"));
  EXPECT_THAT(dev.ask(ConvFwd{.shape = shape,
                              .x = x,
                              .w = w,
                              .y = y,
                              .epilogue = {.activation = Activation::relu, .bias = BiasVector::per_channel}})
                  .wait(),
              StatusIs(Code::invalid_argument, "not bound"));
  Result<BufferHandle> freed = dev.ask(Allocate{.dtype = DType::f32, .count = 240}).wait();
  ASSERT_THAT(freed, IsOk());
  ASSERT_THAT(dev.free(*freed).wait(), IsOk());
  EXPECT_THAT(
      dev
          .ask(ConvFwd{
              .shape = shape, .x = *freed, .w = w, .y = y, .bias = bias, .epilogue = {.bias = BiasVector::per_channel}})
          .wait(),
      StatusIs(Code::stale_handle));
  EXPECT_THAT(dev.ask(ConvFwd{.shape = shape, .x = ix, .w = w, .y = y}).wait(),
              StatusIs(Code::invalid_argument, "holds i32"));
}

INSTANTIATE_TEST_SUITE_P(Isolations, CpuDnnDeviceTest,
                         ::testing::Values(Isolation::in_process, Isolation::worker_process),
                         [](const ::testing::TestParamInfo<Isolation>& info) {
                           return std::string(to_string(info.param));
                         });

// -- the isolated device against the in-process one ----------------------------------------------------------

class CpuDnnIsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Device> in_process = Device::open(system_, options_for(Isolation::in_process));
    Result<Device> isolated = Device::open(system_, options_for(Isolation::worker_process));
    ASSERT_THAT(in_process, IsOk());
    ASSERT_THAT(isolated, IsOk());
    in_process_ = *in_process;
    isolated_ = *isolated;
    ASSERT_GT(isolated_->info().wait()->worker_pid, 0);
  }
  System system_;
  std::optional<Device> in_process_;
  std::optional<Device> isolated_;
};

struct ConvResults {
  std::vector<float> y, dx, dw;
};

ConvResults run_convolutions(const Device& dev, const ConvShape& shape, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& dy) {
  ConvResults out;
  Buffer<float> bx = put(dev, x), bw = put(dev, w), bdy = put(dev, dy);
  Buffer<float> by = put(dev, std::vector<float>(dy.size(), kUnwritten));
  Buffer<float> bdx = put(dev, std::vector<float>(x.size(), kUnwritten));
  Buffer<float> bdw = put(dev, std::vector<float>(w.size(), kUnwritten));
  EXPECT_THAT(dev.ask(ConvFwd{.shape = shape, .x = bx, .w = bw, .y = by}).wait(), IsOk());
  EXPECT_THAT(dev.ask(ConvBwdData{.shape = shape, .dy = bdy, .w = bw, .dx = bdx}).wait(), IsOk());
  EXPECT_THAT(dev.ask(ConvBwdFilter{.shape = shape, .x = bx, .dy = bdy, .dw = bdw}).wait(), IsOk());
  out.y = get(dev, by);
  out.dx = get(dev, bdx);
  out.dw = get(dev, bdw);
  return out;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) sum += double{a[i]} * double{b[i]};
  return sum;
}

TEST_F(CpuDnnIsolationTest, BackwardConvolutionsAreBitForBitTheSameInTheWorker) {
  const std::vector<ConvShape> shapes = {
      // 2-D NHWC, groups, stride, dilation, asymmetric padding: y [2, 4, 4, 3].
      ConvShape{.spatial_rank = 2,
                .layout = TensorLayout::channels_last,
                .n = 2,
                .c = 6,
                .k = 4,
                .groups = 2,
                .input = {7, 6, 0},
                .filter = {3, 2, 0},
                .pre_padding = {1, 1, 0},
                .post_padding = {1, 0, 0},
                .stride = {2, 2, 1},
                .dilation = {1, 2, 1}},
      // 3-D NCDHW: y [1, 3, 4, 3, 3].
      ConvShape{.spatial_rank = 3,
                .layout = TensorLayout::channels_first,
                .n = 1,
                .c = 2,
                .k = 3,
                .input = {4, 5, 3},
                .filter = {2, 3, 2},
                .pre_padding = {0, 1, 1},
                .post_padding = {1, 1, 0},
                .stride = {1, 2, 1}},
      // 1-D, depthwise: y [3, 4, 5].
      ConvShape{.spatial_rank = 1,
                .layout = TensorLayout::channels_last,
                .n = 3,
                .c = 4,
                .k = 4,
                .groups = 4,
                .input = {9, 0, 0},
                .filter = {3, 0, 0},
                .pre_padding = {1, 0, 0},
                .post_padding = {1, 0, 0},
                .stride = {2, 1, 1}},
  };
  std::uint32_t seed = 10;
  for (const ConvShape& shape : shapes) {
    SCOPED_TRACE(dnn::to_string(shape));
    Result<dnn::ConvTensors> tensors = dnn::conv_tensors(shape);
    ASSERT_THAT(tensors, IsOk());
    const std::vector<float> x = random_floats(dnn::storage_extent(tensors->x), ++seed);
    const std::vector<float> w = random_floats(dnn::storage_extent(tensors->w), ++seed);
    const std::vector<float> dy = random_floats(dnn::storage_extent(tensors->y), ++seed);
    ASSERT_EQ(dnn::storage_extent(tensors->y), dnn::element_count(tensors->y));

    const ConvResults local = run_convolutions(*in_process_, shape, x, w, dy);
    const ConvResults remote = run_convolutions(*isolated_, shape, x, w, dy);
    EXPECT_EQ(bits(remote.y), bits(local.y));
    EXPECT_EQ(bits(remote.dx), bits(local.dx));
    EXPECT_EQ(bits(remote.dw), bits(local.dw));

    // And they are right: the backward passes are the adjoints of the forward one,
    // <conv(x, w), dy> = <x, backward_data(dy, w)> = <w, backward_filter(x, dy)>.
    const double forward = dot(local.y, dy);
    EXPECT_NEAR(dot(x, local.dx), forward, 1e-4 * std::max(1.0, std::abs(forward)));
    EXPECT_NEAR(dot(w, local.dw), forward, 1e-4 * std::max(1.0, std::abs(forward)));
    EXPECT_GT(std::abs(forward), 1e-3);
  }
}

TEST_F(CpuDnnIsolationTest, MultiOpGraphsAreBitForBitTheSameInTheWorker) {
  // relu(a b + bias), batched.
  GraphBuilder mm;
  const TensorRef a = mm.tensor(DType::f32, {2, 3, 4});
  const TensorRef m = mm.tensor(DType::f32, {2, 4, 5});
  const TensorRef bias = mm.tensor(DType::f32, {1, 1, 5});
  const TensorRef out = mm.relu(mm.add(mm.matmul(a, m), bias));
  mm.output(out, DType::f32);
  const std::vector<float> av = random_floats(24, 31), mv = random_floats(40, 32), bv = random_floats(5, 33);
  const Tensors mm_inputs{{a.uid, av}, {m.uid, mv}, {bias.uid, bv}};
  const auto mm_graph = build(mm);
  const Tensors mm_local = run_graph(*in_process_, mm_graph, mm_inputs);
  const Tensors mm_remote = run_graph(*isolated_, mm_graph, mm_inputs);
  ASSERT_TRUE(mm_local.contains(out.uid));
  ASSERT_TRUE(mm_remote.contains(out.uid));
  EXPECT_EQ(bits(mm_remote.at(out.uid)), bits(mm_local.at(out.uid)));
  std::vector<double> expected(30);
  for (int bt = 0; bt < 2; ++bt)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) {
        double sum = bv[j];
        for (int p = 0; p < 4; ++p) sum += double{av[(bt * 3 + i) * 4 + p]} * double{mv[(bt * 4 + p) * 5 + j]};
        expected[(bt * 3 + i) * 5 + j] = std::max(sum, 0.0);
      }
  expect_near(mm_local.at(out.uid), expected, 1e-6);

  // Layer norm with its statistics.
  GraphBuilder ln;
  const TensorRef x = ln.tensor(DType::f32, {4, 3, 8});
  const TensorRef scale = ln.tensor(DType::f32, {1, 3, 8});
  const TensorRef shift = ln.tensor(DType::f32, {1, 3, 8});
  const dnn::NormOutputs norm = ln.layer_norm(x, scale, shift, 1e-5f, /*training=*/true);
  for (TensorRef t : {norm.y, norm.mean, norm.inv_variance}) ln.output(t, DType::f32);
  std::vector<float> xv = random_floats(96, 41);
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] += static_cast<float>(i / 24);  // per-sample offsets
  const std::vector<float> sv = random_floats(24, 42), hv = random_floats(24, 43);
  const Tensors ln_inputs{{x.uid, xv}, {scale.uid, sv}, {shift.uid, hv}};
  const auto ln_graph = build(ln);
  const Tensors ln_local = run_graph(*in_process_, ln_graph, ln_inputs);
  const Tensors ln_remote = run_graph(*isolated_, ln_graph, ln_inputs);
  for (TensorRef t : {norm.y, norm.mean, norm.inv_variance}) {
    ASSERT_TRUE(ln_local.contains(t.uid));
    ASSERT_TRUE(ln_remote.contains(t.uid));
    EXPECT_EQ(bits(ln_remote.at(t.uid)), bits(ln_local.at(t.uid))) << "uid " << t.uid;
  }
  std::vector<double> y(96), mean(4), inv(4);
  for (int n = 0; n < 4; ++n) {
    double sum = 0, squares = 0;
    for (int i = 0; i < 24; ++i) sum += xv[n * 24 + i];
    mean[n] = sum / 24;
    for (int i = 0; i < 24; ++i) squares += (xv[n * 24 + i] - mean[n]) * (xv[n * 24 + i] - mean[n]);
    inv[n] = 1 / std::sqrt(squares / 24 + 1e-5);
    for (int i = 0; i < 24; ++i) y[n * 24 + i] = (xv[n * 24 + i] - mean[n]) * inv[n] * sv[i] + hv[i];
  }
  expect_near(ln_local.at(norm.y.uid), y, 1e-5);
  expect_near(ln_local.at(norm.mean.uid), mean, 1e-6);
  expect_near(ln_local.at(norm.inv_variance.uid), inv, 1e-5);
}

TEST_F(CpuDnnIsolationTest, ErrorsHaveTheSameCodesInTheWorker) {
  GraphBuilder b;
  const TensorRef x = b.tensor(DType::f32, {4});
  const TensorRef y = b.pointwise(dnn::PointwiseMode::neg, x);
  b.output(y, DType::f32);
  const auto graph = build(b);
  ASSERT_NE(graph, nullptr);
  auto codes = [&](const Device& dev) {
    std::vector<Code> out;
    Buffer<float> bx = put(dev, std::vector<float>(4, 1.0f));
    Buffer<float> by = put(dev, std::vector<float>(4, 0.0f));
    Buffer<float> small = put(dev, std::vector<float>(3, 0.0f));
    Buffer<std::int32_t> ints = put(dev, std::vector<std::int32_t>(4, 0));
    BufferHandle freed = *dev.ask(Allocate{.dtype = DType::f32, .count = 4}).wait();
    EXPECT_THAT(dev.free(freed).wait(), IsOk());
    const std::vector<std::vector<TensorBinding>> cases = {
        {{x.uid, bx}, {y.uid, by}},              // ok
        {{x.uid, bx}},                           // unbound
        {{x.uid, bx}, {y.uid, by}, {7, small}},  // unknown uid
        {{x.uid, ints}, {y.uid, by}},            // dtype
        {{x.uid, bx}, {y.uid, small}},           // too small
        {{x.uid, bx}, {y.uid, freed}},           // stale
        {{x.uid, bx}, {y.uid, BufferHandle{}}},  // null
    };
    for (const auto& bindings : cases) out.push_back(dev.ask(RunGraph{graph, bindings}).wait().code());
    out.push_back(dev.ask(RunGraph{nullptr, {}}).wait().code());
    ConvShape shape = fused_shape();
    shape.groups = 3;
    out.push_back(dev.ask(ConvFwd{.shape = shape}).wait().code());
    shape = fused_shape();
    shape.dtype = DType::i32;
    out.push_back(dev.ask(ConvBwdData{.shape = shape}).wait().code());
    return out;
  };
  const std::vector<Code> expected = {Code::ok,
                                      Code::invalid_argument,
                                      Code::invalid_argument,
                                      Code::invalid_argument,
                                      Code::invalid_argument,
                                      Code::stale_handle,
                                      Code::invalid_argument,
                                      Code::invalid_argument,
                                      Code::invalid_argument,
                                      Code::not_supported};
  EXPECT_EQ(codes(*in_process_), expected);
  EXPECT_EQ(codes(*isolated_), expected);
}

}  // namespace
}  // namespace accel

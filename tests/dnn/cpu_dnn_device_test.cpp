// Convolutions and operation graphs through the Device API on the CPU device, in this process and in an
// isolated worker process: the fused convolution request against the same graph built by hand, against its
// unfused steps and with every epilogue, and the errors of bad requests.
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
#include "testing/cpu_dnn_device.hpp"
#include "testing/status_matchers.hpp"

namespace accel {
namespace {

using dnn::GraphBuilder;
using dnn::TensorBinding;
using dnn::TensorLayout;
using dnn::TensorRef;
using testing::IsOk;
using testing::StatusIs;
using namespace cpu_dnn_testing;

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

}  // namespace
}  // namespace accel

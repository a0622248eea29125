// Convolutions and operation graphs on an isolated CPU device against the in-process one: the same bits and
// the same error codes.
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

// What the tests of convolutions and graphs through the Device API on the CPU device share: host and device
// buffers, graphs run on a device with host inputs, and the fused convolution's shape.
#pragma once

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

namespace accel::cpu_dnn_testing {

using dnn::GraphBuilder;
using dnn::TensorBinding;
using dnn::TensorLayout;
using dnn::TensorRef;
using testing::IsOk;
using testing::StatusIs;

inline constexpr float kUnwritten = std::numeric_limits<float>::quiet_NaN();

inline DeviceOptions options_for(Isolation isolation) {
  return DeviceOptions{.kind = DeviceKind::cpu, .isolation = isolation};
}

inline std::vector<float> random_floats(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = uniform(rng);
  return values;
}

inline std::vector<std::uint32_t> bits(const std::vector<float>& values) {
  std::vector<std::uint32_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = std::bit_cast<std::uint32_t>(values[i]);
  return out;
}

inline void expect_near(const std::vector<float>& actual, const std::vector<double>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance * std::max(1.0, std::abs(expected[i]))) << "element " << i;
  }
}

template <class T>
inline Buffer<T> put(const Device& dev, const std::vector<T>& host) {
  Result<Buffer<T>> buffer = dev.allocate<T>(host.size()).wait();
  EXPECT_THAT(buffer, IsOk());
  if (!buffer.ok()) return {};
  EXPECT_THAT(dev.upload(std::span<const T>(host), *buffer).wait(), IsOk());
  return *buffer;
}

template <class T>
inline std::vector<T> get(const Device& dev, const Buffer<T>& buffer) {
  std::vector<T> host(buffer.size());
  EXPECT_THAT(dev.download(buffer, std::span<T>(host)).wait(), IsOk());
  return host;
}

inline std::shared_ptr<const dnn::Graph> build(GraphBuilder& builder) {
  Result<std::shared_ptr<const dnn::Graph>> graph = builder.build();
  EXPECT_THAT(graph, IsOk());
  return graph.ok() ? *graph : nullptr;
}

using Tensors = std::map<std::uint32_t, std::vector<float>>;

// Runs an all-f32 graph: every input from `inputs`, every output read back (outputs start as NaN, so an
// element the graph does not write shows).
inline Tensors run_graph(const Device& dev, const std::shared_ptr<const dnn::Graph>& graph, const Tensors& inputs) {
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

// NHWC, 2 groups, asymmetric padding, stride and dilation: y [2, 6, 5, 2].
inline ConvShape fused_shape() {
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

}  // namespace accel::cpu_dnn_testing

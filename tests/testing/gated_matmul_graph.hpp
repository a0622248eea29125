// A gated MLP's first half as a compiled graph (a matmul of x and the stacked gate|up weight, then gated in either
// layout) on any device against the double reference: the CPU device's and the CUDA device's execute tests both
// hold it to the same check. On an H100/H200 a bucket of 2,048 rows or more in f16 with the gates in groups of 8 runs
// as one fused product (cuda_gated_matmul.cu); the rest, and a graph that also outputs the product, run the two ops.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/graph/execute.hpp"
#include "testing/buffer_values.hpp"
#include "testing/numeric_error.hpp"
#include "testing/residual_matmul.hpp"

namespace accel::graph::testing {

struct GatedMatmulCase {
  DType dtype = DType::f16;  // f32 or f16
  Activation activation = Activation::silu;
  GateLayout layout = GateLayout::groups_of_8;
  bool product_is_output = false;  // the matmul's product an output of the graph as well
  std::int64_t k = 96, width = 80;
};

namespace detail {

// The product's column that holds output column j's gate; its up is `up_offset` columns on.
inline std::int64_t gate_column(GateLayout layout, std::int64_t j) {
  return layout == GateLayout::groups_of_8 ? 16 * (j / 8) + j % 8 : j;
}

template <class T>
void expect_gated_matmul(const Device& device, const GatedMatmulCase& c, ExecuteMode mode, std::mt19937& rng) {
  GraphBuilder b;
  b.bucket("rows", Ladder::powers_of_two(8, 8192));
  Tensor x = b.input("x", c.dtype, {Dim::sym("rows"), Dim::of(c.k)});
  Tensor w = b.parameter("w", c.dtype, {Dim::of(2 * c.width), Dim::of(c.k)});
  Tensor product = b.matmul(x, w, {.transpose_b = true});
  b.output("y", b.gated(product, c.activation, c.layout));
  if (c.product_is_output) b.output("product", product);
  Result<std::shared_ptr<const Graph>> graph = b.build();
  ASSERT_TRUE(graph.ok()) << graph.status().to_string();

  // Weights of scale 1 / sqrt(k), so that the gates are of order 1, where the activations bend.
  std::vector<float> wv = random_values(static_cast<std::size_t>(2 * c.width * c.k), DType::f32, rng);
  for (float& v : wv) v = widened(stored<T>({v / std::sqrt(static_cast<float>(c.k))}))[0];
  std::vector<std::uint8_t> weight_bytes((*graph)->weight_bytes());
  const std::vector<T> stored_w = stored<T>(wv);
  std::memcpy(weight_bytes.data() + (*graph)->parameters()[0].offset, stored_w.data(), stored_w.size() * sizeof(T));
  const Buffer<std::uint8_t> weights = accel::testing::filled(device, weight_bytes);
  const std::int64_t up_offset = c.layout == GateLayout::groups_of_8 ? 8 : c.width;
  for (std::int64_t rows : {1, 17, 300, 4100}) {
    if (rows * c.k * 2 * c.width > kMostReferenceProducts) continue;
    const std::vector<float> xv = random_values(static_cast<std::size_t>(rows * c.k), c.dtype, rng);
    std::vector<double> expected(static_cast<std::size_t>(rows * c.width)), scale(expected.size());
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t j = 0; j < c.width; ++j) {
        const std::int64_t g = gate_column(c.layout, j);
        double gate = 0, up = 0;
        for (std::int64_t q = 0; q < c.k; ++q) {
          gate += double{xv[r * c.k + q]} * wv[g * c.k + q];
          up += double{xv[r * c.k + q]} * wv[(g + up_offset) * c.k + q];
        }
        expected[r * c.width + j] = activate(c.activation, gate) * up;
        scale[r * c.width + j] = std::abs(expected[r * c.width + j]) + 1.0;
      }
    }
    const Buffer<T> xb = accel::testing::filled(device, stored<T>(xv));
    Buffer<T> y = *device.allocate<T>(expected.size()).wait();
    Buffer<T> products = *device.allocate<T>(static_cast<std::uint64_t>(rows * 2 * c.width)).wait();
    graph::Execute request{.graph = *graph, .symbols = {{"rows", rows}}, .weights = weights, .mode = mode};
    request.inputs = {{"x", xb}};
    request.outputs = {{"y", y}};
    if (c.product_is_output) request.outputs.push_back({"product", products});
    const Status ran = device.ask(request).wait().status();
    ASSERT_TRUE(ran.ok()) << ran.to_string();
    const std::vector<float> got = widened(accel::testing::contents(device, y));
    // f16: the product rounded (unfused), then the gated value; the fused product rounds once.
    const double tolerance = c.dtype == DType::f16 ? 4e-3 : 1e-5;
    EXPECT_LT(accel::testing::max_scaled_error(std::vector<double>(got.begin(), got.end()), expected, scale), tolerance)
        << "rows " << rows;
    if (!c.product_is_output) continue;
    const std::vector<float> product_values = widened(accel::testing::contents(device, products));
    double worst = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t col = 0; col < 2 * c.width; ++col) {
        double sum = 0;
        for (std::int64_t q = 0; q < c.k; ++q) sum += double{xv[r * c.k + q]} * wv[col * c.k + q];
        worst = std::max(worst, std::abs(product_values[r * 2 * c.width + col] - sum) / (std::abs(sum) + 1.0));
      }
    }
    EXPECT_LT(worst, tolerance) << "the product output, rows " << rows;
  }
}

}  // namespace detail

// Every case of `cases`, in `mode`, on `device`.
inline void expect_gated_matmuls(const Device& device, std::initializer_list<GatedMatmulCase> cases, ExecuteMode mode,
                                 unsigned seed) {
  std::mt19937 rng(seed);
  for (const GatedMatmulCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << to_string(c.dtype) << " activation " << static_cast<int>(c.activation)
                                      << (c.layout == GateLayout::groups_of_8 ? " groups of 8" : " halves")
                                      << (c.product_is_output ? ", the product an output too" : ""));
    if (c.dtype == DType::f16) {
      detail::expect_gated_matmul<Half>(device, c, mode, rng);
    } else {
      detail::expect_gated_matmul<float>(device, c, mode, rng);
    }
  }
}

}  // namespace accel::graph::testing

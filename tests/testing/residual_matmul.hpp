// A matmul with a bias and a residual added in its epilogue (a pre-norm block's output projection), run through a
// compiled graph on any device against the double reference: the CPU device's and the CUDA device's execute tests
// both hold it to the same check. Weights as a parameter (packed or cuBLASLt's plan) or as an input (computed).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/graph/execute.hpp"
#include "testing/buffer_values.hpp"
#include "testing/matmul_reference.hpp"
#include "testing/numeric_error.hpp"

namespace accel::graph::testing {

struct ResidualMatmulCase {
  DType dtype = DType::f32;  // f32 or f16
  bool weights_are_parameters = true;
  std::int64_t k = 96, n = 80;
};

namespace detail {
template <class T>
std::vector<T> stored(const std::vector<float>& values) {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, Half>) {
      out[i] = to_half(values[i]);
    } else {
      out[i] = values[i];
    }
  }
  return out;
}
template <class T>
std::vector<float> widened(const std::vector<T>& values) {
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, Half>) {
      out[i] = to_float(values[i]);
    } else {
      out[i] = values[i];
    }
  }
  return out;
}
// Values as `dtype` holds them, so that the reference computes with what the device reads.
inline std::vector<float> random_values(std::size_t count, DType dtype, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(count);
  for (float& e : v) e = dtype == DType::f16 ? to_float(to_half(dist(rng))) : dist(rng);
  return v;
}

// The double reference's work a case may ask for (a 4,100 x 1,024 x 3,072 product took it 30 s on the H200's host).
inline constexpr std::int64_t kMostReferenceProducts = 400'000'000;

template <class T>
void expect_residual_matmul(const Device& device, const ResidualMatmulCase& c, ExecuteMode mode, std::mt19937& rng) {
  GraphBuilder b;
  b.bucket("rows", Ladder::powers_of_two(8, 8192));
  const Dim rows_dim = Dim::sym("rows"), k = Dim::of(c.k), n = Dim::of(c.n);
  Tensor x = b.input("x", c.dtype, {rows_dim, k});
  Tensor w = c.weights_are_parameters ? b.parameter("w", c.dtype, {n, k}) : b.input("w", c.dtype, {n, k});
  Tensor bias = b.parameter("bias", c.dtype, {n});
  Tensor stream = b.input("stream", c.dtype, {rows_dim, n});
  b.output("y", b.matmul(x, w, {.transpose_b = true, .bias = bias, .residual = stream}));
  Result<std::shared_ptr<const Graph>> graph = b.build();
  ASSERT_TRUE(graph.ok()) << graph.status().to_string();

  const std::vector<float> wv = random_values(static_cast<std::size_t>(c.n * c.k), c.dtype, rng);
  const std::vector<float> bv = random_values(static_cast<std::size_t>(c.n), c.dtype, rng);
  std::vector<std::uint8_t> weight_bytes((*graph)->weight_bytes());
  for (const Graph::ParameterSlot& p : (*graph)->parameters()) {
    const std::vector<T> values = stored<T>((*graph)->tensors()[p.tensor].name == "w" ? wv : bv);
    std::memcpy(weight_bytes.data() + p.offset, values.data(), values.size() * sizeof(T));
  }
  const Buffer<std::uint8_t> weights = accel::testing::filled(device, weight_bytes);
  const Buffer<T> wb = accel::testing::filled(device, stored<T>(wv));
  for (std::int64_t rows : {1, 17, 300, 4100}) {
    if (rows * c.k * c.n > kMostReferenceProducts) continue;
    const std::vector<float> xv = random_values(static_cast<std::size_t>(rows * c.k), c.dtype, rng);
    const std::vector<float> sv = random_values(static_cast<std::size_t>(rows * c.n), c.dtype, rng);
    std::vector<double> expected = matmul_reference(xv, wv, true, bv.data(), rows, c.k, c.n, Activation::identity);
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += sv[i];
    const Buffer<T> xb = accel::testing::filled(device, stored<T>(xv));
    const Buffer<T> sb = accel::testing::filled(device, stored<T>(sv));
    Buffer<T> y = *device.allocate<T>(expected.size()).wait();
    graph::Execute request{.graph = *graph, .symbols = {{"rows", rows}}, .weights = weights, .mode = mode};
    request.inputs = {{"x", xb}, {"stream", sb}};
    if (!c.weights_are_parameters) request.inputs.push_back({"w", wb});
    request.outputs = {{"y", y}};
    const Status ran = device.ask(request).wait().status();
    ASSERT_TRUE(ran.ok()) << ran.to_string();
    // Relative to |y| + 1: f16 rounds the product and then the sum (on the H200 cuBLASLt's epilogue was 1 step of
    // f16 off, 2^-10 relative, where one rounding would be half of one), f32 sums k products.
    const std::vector<float> got = widened(accel::testing::contents(device, y));
    std::vector<double> out(got.begin(), got.end()), scale(expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) scale[i] = std::abs(expected[i]) + 1.0;
    const double tolerance = c.dtype == DType::f16 ? 2.5e-3 : 1e-5;
    EXPECT_LT(accel::testing::max_scaled_error(out, expected, scale), tolerance) << "rows " << rows;
  }
}
}  // namespace detail

// Every case of `cases`, in `mode`, on `device`.
inline void expect_residual_matmuls(const Device& device, std::initializer_list<ResidualMatmulCase> cases,
                                    ExecuteMode mode, unsigned seed) {
  std::mt19937 rng(seed);
  for (const ResidualMatmulCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << to_string(c.dtype) << (c.weights_are_parameters ? " parameter" : " input")
                                      << " weights");
    if (c.dtype == DType::f16) {
      detail::expect_residual_matmul<Half>(device, c, mode, rng);
    } else {
      detail::expect_residual_matmul<float>(device, c, mode, rng);
    }
  }
}

}  // namespace accel::graph::testing

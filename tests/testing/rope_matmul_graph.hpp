// A packed q|k|v projection and its rope (with Qwen3's q/k norms, or a bias and none) as a compiled graph, on any
// device against the double reference: the CPU device's and the CUDA device's execute tests both hold it to the same
// check. On an H100/H200 a bucket of 2,048 rows or more in f16 with heads of 64 or 128 runs as one fused product
// (cuda_rope_matmul.cu); the rest, and a graph that also outputs the product, run the two ops.
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

struct RopeMatmulCase {
  DType dtype = DType::f16;  // f32 or f16
  std::int32_t heads = 4, kv_heads = 2, head_dim = 128;
  bool normed = true, biased = false;
  bool product_is_output = false;  // the matmul's product an output of the graph as well
  std::int64_t k = 64;
};

namespace detail {

// The rope of one row of the packed product in double, as RopeOptions says: q's and k's heads RMS-normalised (where
// normed) and rotated by the angle position * inverse frequency, computed in float as the kernels compute it.
inline void rotate_row(const RopeMatmulCase& c, float theta, std::int32_t position, const std::vector<float>& q_gamma,
                       const std::vector<float>& k_gamma, double* row) {
  const int half = c.head_dim / 2;
  for (int head = 0; head < c.heads + c.kv_heads; ++head) {
    double* h = row + std::int64_t{head} * c.head_dim;
    if (c.normed) {
      double squares = 0;
      for (int i = 0; i < c.head_dim; ++i) squares += h[i] * h[i];
      const double scale = 1.0 / std::sqrt(squares / c.head_dim + 1e-6);
      const std::vector<float>& gamma = head < c.heads ? q_gamma : k_gamma;
      for (int i = 0; i < c.head_dim; ++i) h[i] *= scale * gamma[static_cast<std::size_t>(i)];
    }
    for (int i = 0; i < half; ++i) {
      const float inverse = 1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(c.head_dim));
      const double angle = static_cast<float>(position) * inverse;
      const double a = h[i], b = h[i + half];
      h[i] = a * std::cos(angle) - b * std::sin(angle);
      h[i + half] = b * std::cos(angle) + a * std::sin(angle);
    }
  }
}

template <class T>
void expect_rope_matmul(const Device& device, const RopeMatmulCase& c, ExecuteMode mode, std::mt19937& rng) {
  constexpr float kTheta = 1e6f;
  const std::int64_t n = std::int64_t{c.heads + 2 * c.kv_heads} * c.head_dim;
  GraphBuilder b;
  b.bucket("rows", Ladder::powers_of_two(8, 8192));
  Tensor x = b.input("x", c.dtype, {Dim::sym("rows"), Dim::of(c.k)});
  Tensor positions = b.input("positions", DType::i32, {Dim::sym("rows")});
  Tensor w = b.parameter("w", c.dtype, {Dim::of(n), Dim::of(c.k)});
  std::optional<Tensor> bias;
  if (c.biased) bias = b.parameter("bias", c.dtype, {Dim::of(n)});
  std::optional<Tensor> q_norm, k_norm;
  if (c.normed) {
    q_norm = b.parameter("q_norm", c.dtype, {Dim::of(c.head_dim)});
    k_norm = b.parameter("k_norm", c.dtype, {Dim::of(c.head_dim)});
  }
  Tensor product = b.matmul(x, w, {.transpose_b = true, .bias = bias});
  b.output("y", b.rope(product, positions, c.heads, kTheta,
                       {.kv_heads = c.kv_heads, .query_norm = q_norm, .key_norm = k_norm, .eps = 1e-6f}));
  if (c.product_is_output) b.output("product", product);
  Result<std::shared_ptr<const Graph>> graph = b.build();
  ASSERT_TRUE(graph.ok()) << graph.status().to_string();

  // Weights of scale 1 / sqrt(k), so that the product is of order 1; gammas around 1.
  const auto values = [&](std::int64_t count, float scale, float offset) {
    std::vector<float> v = random_values(static_cast<std::size_t>(count), DType::f32, rng);
    for (float& e : v) e = widened(stored<T>({offset + e * scale}))[0];
    return v;
  };
  const std::vector<float> wv = values(n * c.k, 1.0f / std::sqrt(static_cast<float>(c.k)), 0.0f);
  const std::vector<float> bv = values(n, 0.3f, 0.0f), qg = values(c.head_dim, 0.2f, 1.0f),
                           kg = values(c.head_dim, 0.2f, 1.0f);
  std::vector<std::uint8_t> weight_bytes((*graph)->weight_bytes());
  const auto place = [&](std::size_t parameter, const std::vector<float>& v) {
    const std::vector<T> s = stored<T>(v);
    std::memcpy(weight_bytes.data() + (*graph)->parameters()[parameter].offset, s.data(), s.size() * sizeof(T));
  };
  place(0, wv);
  std::size_t next = 1;
  if (c.biased) place(next++, bv);
  if (c.normed) place(next++, qg), place(next++, kg);
  const Buffer<std::uint8_t> weights = accel::testing::filled(device, weight_bytes);
  for (std::int64_t rows : {1, 300, 4100}) {
    const std::vector<float> xv = random_values(static_cast<std::size_t>(rows * c.k), c.dtype, rng);
    std::vector<std::int32_t> pv(static_cast<std::size_t>(rows));
    for (std::size_t r = 0; r < pv.size(); ++r) pv[r] = static_cast<std::int32_t>((r * 7919) % 4096);
    std::vector<double> product_expected(static_cast<std::size_t>(rows * n)), expected, scale;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = c.biased ? bv[static_cast<std::size_t>(j)] : 0.0;
        for (std::int64_t q = 0; q < c.k; ++q) sum += double{xv[r * c.k + q]} * wv[j * c.k + q];
        product_expected[r * n + j] = sum;
      }
    expected = product_expected;
    for (std::int64_t r = 0; r < rows; ++r)
      rotate_row(c, kTheta, pv[static_cast<std::size_t>(r)], qg, kg, &expected[r * n]);
    for (const double e : expected) scale.push_back(std::abs(e) + 1.0);
    const Buffer<T> xb = accel::testing::filled(device, stored<T>(xv));
    const Buffer<std::int32_t> pb = accel::testing::filled(device, pv);
    Buffer<T> y = *device.allocate<T>(expected.size()).wait();
    Buffer<T> products = *device.allocate<T>(expected.size()).wait();
    graph::Execute request{.graph = *graph, .symbols = {{"rows", rows}}, .weights = weights, .mode = mode};
    request.inputs = {{"x", xb}, {"positions", pb}};
    request.outputs = {{"y", y}};
    if (c.product_is_output) request.outputs.push_back({"product", products});
    const Status ran = device.ask(request).wait().status();
    ASSERT_TRUE(ran.ok()) << ran.to_string();
    const std::vector<float> got = widened(accel::testing::contents(device, y));
    // f16: the product rounded, then the normalised head rounded again before its rotation. f32: the CUDA rope's
    // sine and cosine in float (2e-5 seen on the H200; the CPU's within 1e-5).
    const double tolerance = c.dtype == DType::f16 ? 4e-3 : 5e-5;
    EXPECT_LT(accel::testing::max_scaled_error(std::vector<double>(got.begin(), got.end()), expected, scale), tolerance)
        << "rows " << rows;
    if (!c.product_is_output) continue;
    const std::vector<float> product_values = widened(accel::testing::contents(device, products));
    std::vector<double> product_scale;
    for (const double e : product_expected) product_scale.push_back(std::abs(e) + 1.0);
    EXPECT_LT(accel::testing::max_scaled_error(std::vector<double>(product_values.begin(), product_values.end()),
                                               product_expected, product_scale),
              tolerance)
        << "the product output, rows " << rows;
  }
}

}  // namespace detail

// Every case of `cases`, in `mode`, on `device`.
inline void expect_rope_matmuls(const Device& device, std::initializer_list<RopeMatmulCase> cases, ExecuteMode mode,
                                unsigned seed) {
  std::mt19937 rng(seed);
  for (const RopeMatmulCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << to_string(c.dtype) << ", " << c.heads << "+" << c.kv_heads << " heads of "
                                      << c.head_dim << (c.normed ? ", normed" : "") << (c.biased ? ", biased" : "")
                                      << (c.product_is_output ? ", the product an output too" : ""));
    if (c.dtype == DType::f16) {
      detail::expect_rope_matmul<Half>(device, c, mode, rng);
    } else {
      detail::expect_rope_matmul<float>(device, c, mode, rng);
    }
  }
}

}  // namespace accel::graph::testing

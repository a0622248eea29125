// A post-norm transformer encoder layer (BERT's) as a compiled graph over packed sequences, its random weights
// and inputs, and a naive double-precision reference of the same layer: what the graph tests on every device
// compare against.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "accel/graph/graph.hpp"

namespace accel::graph::testing {

struct EncoderShape {
  std::int64_t width = 64;
  std::int32_t heads = 4;
  std::int64_t hidden = 128;
  std::int32_t max_length = 64;
  DType dtype = DType::f32;
  bool packed_qkv = false;  // q, k and v as one [3 width, width] projection read by attention_packed
};

// x [tokens, width] -> l2_normalize(pool(layer(x), mean)) [sequences, width], and the layer output [tokens, width].
inline std::shared_ptr<const Graph> encoder_graph(const EncoderShape& s, Ladder tokens, Ladder sequences) {
  GraphBuilder b;
  b.bucket("tokens", std::move(tokens)).bucket("sequences", std::move(sequences));
  const Dim T = Dim::sym("tokens"), W = Dim::of(s.width), H = Dim::of(s.hidden);
  Tensor x = b.input("x", s.dtype, {T, W});
  Tensor offsets = b.input("offsets", DType::i32, {Dim::sym("sequences", 1)}, Padding::repeat_last);
  auto p = [&](const char* name, Shape shape) { return b.parameter(name, s.dtype, std::move(shape)); };
  Tensor a;
  if (s.packed_qkv) {
    const Dim W3 = Dim::of(3 * s.width);
    Tensor qkv = b.matmul(x, p("wqkv", {W3, W}), {.transpose_b = true, .bias = p("bqkv", {W3})});
    a = b.attention_packed(qkv, offsets, s.heads, s.max_length);
  } else {
    Tensor q = b.matmul(x, p("wq", {W, W}), {.transpose_b = true, .bias = p("bq", {W})});
    Tensor k = b.matmul(x, p("wk", {W, W}), {.transpose_b = true, .bias = p("bk", {W})});
    Tensor v = b.matmul(x, p("wv", {W, W}), {.transpose_b = true, .bias = p("bv", {W})});
    a = b.attention(q, k, v, offsets, s.heads, s.max_length);
  }
  Tensor o = b.matmul(a, p("wo", {W, W}), {.transpose_b = true, .bias = p("bo", {W})});
  Tensor h = b.layer_norm(o, p("g1", {W}), p("b1", {W}), 1e-5f, x);
  Tensor f =
      b.matmul(h, p("wf", {H, W}), {.transpose_b = true, .bias = p("bf", {H}), .activation = Activation::gelu_erf});
  Tensor g = b.matmul(f, p("wg", {W, H}), {.transpose_b = true, .bias = p("bg", {W})});
  Tensor y = b.layer_norm(g, p("g2", {W}), p("b2", {W}), 1e-5f, h);
  b.output("y", y);
  b.output("pooled", b.l2_normalize(b.pool(y, offsets, graph::PoolMode::mean)));
  return *b.build();
}

// Random f32 values of every parameter, by the graph's layout (float values; the caller converts them).
inline std::vector<std::vector<float>> random_parameters(const Graph& graph, std::mt19937& rng) {
  std::vector<std::vector<float>> values;
  for (const Graph::ParameterSlot& slot : graph.parameters()) {
    const TensorInfo& t = graph.tensors()[slot.tensor];
    std::int64_t n = 1;
    for (const Dim& d : t.shape) n *= d.offset;
    const bool gain = t.name[0] == 'g' && t.shape.size() == 1;
    std::normal_distribution<float> dist(gain ? 1.0f : 0.0f, gain ? 0.1f : 0.15f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& e : v) e = dist(rng);
    values.push_back(std::move(v));
  }
  return values;
}

// Random sequence lengths in [1, max_length] summing to at most `tokens`, as offsets.
inline std::vector<std::int32_t> random_offsets(std::int64_t sequences, std::int32_t max_length, std::mt19937& rng) {
  std::uniform_int_distribution<std::int32_t> length(1, max_length);
  std::vector<std::int32_t> offsets{0};
  for (std::int64_t i = 0; i < sequences; ++i) offsets.push_back(offsets.back() + length(rng));
  return offsets;
}

// The layer in double, one sequence at a time: out is [tokens, width], pooled [sequences, width].
struct EncoderReference {
  std::vector<double> out, pooled;
};

inline EncoderReference reference_encoder(const EncoderShape& s, const Graph& graph,
                                          const std::vector<std::vector<float>>& params, const std::vector<float>& x,
                                          const std::vector<std::int32_t>& offsets) {
  auto param = [&](const char* name) -> const std::vector<float>& {
    for (std::size_t i = 0; i < graph.parameters().size(); ++i)
      if (graph.tensors()[graph.parameters()[i].tensor].name == name) return params[i];
    throw std::runtime_error(name);
  };
  const std::size_t W = static_cast<std::size_t>(s.width), H = static_cast<std::size_t>(s.hidden);
  const std::size_t T = static_cast<std::size_t>(offsets.back());
  auto linear = [&](const std::vector<double>& in, std::size_t rows, std::size_t k, const char* w, const char* bias,
                    std::size_t n) {
    std::vector<double> y(rows * n);
    const auto& wv = param(w);
    const auto& bv = param(bias);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t j = 0; j < n; ++j) {
        double acc = bv[j];
        for (std::size_t i = 0; i < k; ++i) acc += in[r * k + i] * wv[j * k + i];
        y[r * n + j] = acc;
      }
    return y;
  };
  auto norm = [&](std::vector<double> v, const std::vector<double>& residual, const char* g, const char* b) {
    for (std::size_t r = 0; r < T; ++r) {
      double mean = 0, var = 0;
      for (std::size_t c = 0; c < W; ++c) mean += (v[r * W + c] += residual[r * W + c]);
      mean /= static_cast<double>(W);
      for (std::size_t c = 0; c < W; ++c) var += (v[r * W + c] - mean) * (v[r * W + c] - mean);
      var /= static_cast<double>(W);
      for (std::size_t c = 0; c < W; ++c)
        v[r * W + c] = (v[r * W + c] - mean) / std::sqrt(var + 1e-5) * param(g)[c] + param(b)[c];
    }
    return v;
  };
  const std::vector<double> xd(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(T * W));
  std::vector<double> q, k, v;
  if (s.packed_qkv) {
    const auto qkv = linear(xd, T, W, "wqkv", "bqkv", 3 * W);
    for (std::vector<double>* part : {&q, &k, &v}) part->resize(T * W);
    for (std::size_t r = 0; r < T; ++r)
      for (std::size_t c = 0; c < W; ++c) {
        q[r * W + c] = qkv[r * 3 * W + c];
        k[r * W + c] = qkv[r * 3 * W + W + c];
        v[r * W + c] = qkv[r * 3 * W + 2 * W + c];
      }
  } else {
    q = linear(xd, T, W, "wq", "bq", W);
    k = linear(xd, T, W, "wk", "bk", W);
    v = linear(xd, T, W, "wv", "bv", W);
  }
  std::vector<double> a(T * W, 0.0);
  const std::size_t d = W / static_cast<std::size_t>(s.heads);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  for (std::size_t seq = 0; seq + 1 < offsets.size(); ++seq) {
    const auto begin = static_cast<std::size_t>(offsets[seq]), end = static_cast<std::size_t>(offsets[seq + 1]);
    for (std::size_t h = 0; h < static_cast<std::size_t>(s.heads); ++h)
      for (std::size_t i = begin; i < end; ++i) {
        std::vector<double> score(end - begin);
        double top = -1e300, sum = 0;
        for (std::size_t j = begin; j < end; ++j) {
          double dot = 0;
          for (std::size_t c = 0; c < d; ++c) dot += q[i * W + h * d + c] * k[j * W + h * d + c];
          score[j - begin] = dot * scale;
          top = std::max(top, score[j - begin]);
        }
        for (double& e : score) sum += (e = std::exp(e - top));
        for (std::size_t j = begin; j < end; ++j)
          for (std::size_t c = 0; c < d; ++c) a[i * W + h * d + c] += score[j - begin] / sum * v[j * W + h * d + c];
      }
  }
  const auto h1 = norm(linear(a, T, W, "wo", "bo", W), xd, "g1", "b1");
  auto f = linear(h1, T, W, "wf", "bf", H);
  for (double& e : f) e = 0.5 * e * (1.0 + std::erf(e / std::sqrt(2.0)));
  EncoderReference ref;
  ref.out = norm(linear(f, T, H, "wg", "bg", W), h1, "g2", "b2");
  const std::size_t S = offsets.size() - 1;
  ref.pooled.assign(S * W, 0.0);
  for (std::size_t seq = 0; seq < S; ++seq) {
    const auto begin = static_cast<std::size_t>(offsets[seq]), end = static_cast<std::size_t>(offsets[seq + 1]);
    double norm2 = 0;
    for (std::size_t c = 0; c < W; ++c) {
      double m = 0;
      for (std::size_t r = begin; r < end; ++r) m += ref.out[r * W + c];
      ref.pooled[seq * W + c] = end > begin ? m / static_cast<double>(end - begin) : 0.0;
      norm2 += ref.pooled[seq * W + c] * ref.pooled[seq * W + c];
    }
    for (std::size_t c = 0; c < W; ++c) ref.pooled[seq * W + c] /= std::max(std::sqrt(norm2), 1e-12);
  }
  return ref;
}

// The weights buffer's bytes: each parameter's f32 values at its offset.
inline std::vector<std::uint8_t> weight_bytes_f32(const Graph& graph, const std::vector<std::vector<float>>& params) {
  std::vector<std::uint8_t> bytes(graph.weight_bytes());
  for (std::size_t i = 0; i < params.size(); ++i)
    std::memcpy(bytes.data() + graph.parameters()[i].offset, params[i].data(), params[i].size() * sizeof(float));
  return bytes;
}

}  // namespace accel::graph::testing

// A pre-norm decoder layer (Qwen3's) as a compiled graph over packed sequences: RMSNorm, grouped-query q/k/v, q/k
// RMSNorm per head, rotary positions, causal attention (within a sliding window when `window` > 0), a SwiGLU block,
// residuals, last-token pooling. What the graph codec's fuzzer is seeded with beside the encoder
// (fuzz/make_corpus.cpp).
#pragma once

#include <memory>

#include "accel/graph/graph.hpp"

namespace accel::graph::testing {

inline std::shared_ptr<const Graph> decoder_graph(DType dtype, Ladder tokens, Ladder sequences,
                                                  std::int32_t window = 0) {
  constexpr std::int64_t kWidth = 32, kHeads = 4, kKvHeads = 2, kHead = 16, kInner = 64;
  GraphBuilder b;
  b.bucket("tokens", std::move(tokens)).bucket("sequences", std::move(sequences));
  const Dim T = Dim::sym("tokens"), W = Dim::of(kWidth);
  Tensor x = b.input("x", dtype, {T, W});
  Tensor offsets = b.input("offsets", DType::i32, {Dim::sym("sequences", 1)}, Padding::repeat_last);
  auto p = [&](const char* name, Shape shape) { return b.parameter(name, dtype, std::move(shape)); };
  auto linear = [&](Tensor in, const char* name, std::int64_t out, std::int64_t from,
                    Activation activation = Activation::identity) {
    return b.matmul(in, p(name, {Dim::of(out), Dim::of(from)}), {.transpose_b = true, .activation = activation});
  };
  Tensor positions = b.sequence_positions(offsets, T);
  auto project = [&](Tensor in, const char* name, const char* norm, std::int64_t heads) {
    Tensor y = b.reshape(linear(in, name, heads * kHead, kWidth), {T, Dim::of(heads), Dim::of(kHead)});
    y = b.reshape(b.rms_norm(y, p(norm, {Dim::of(kHead)}), 1e-6f), {T, Dim::of(heads * kHead)});
    return b.rope(y, positions, static_cast<std::int32_t>(heads), 1e6f);
  };
  Tensor h = b.rms_norm(x, p("g1", {W}), 1e-6f);
  Tensor a = b.attention(project(h, "wq", "gq", kHeads), project(h, "wk", "gk", kKvHeads),
                         linear(h, "wv", kKvHeads * kHead, kWidth), offsets, kHeads, 4096,
                         {.kv_heads = kKvHeads, .causal = true, .window = window});
  Tensor r = b.binary(BinaryOp::add, x, linear(a, "wo", kWidth, kHeads * kHead));
  h = b.rms_norm(r, p("g2", {W}), 1e-6f);
  Tensor gated =
      b.binary(BinaryOp::mul, linear(h, "wg", kInner, kWidth, Activation::silu), linear(h, "wu", kInner, kWidth));
  Tensor y = b.binary(BinaryOp::add, r, linear(gated, "wd", kWidth, kInner));
  b.output("pooled", b.l2_normalize(b.pool(b.rms_norm(y, p("g3", {W}), 1e-6f), offsets, PoolMode::last)));
  return *b.build();
}

}  // namespace accel::graph::testing

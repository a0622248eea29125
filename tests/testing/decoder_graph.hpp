// A pre-norm decoder layer (Qwen3's, as embed/model_graph.cpp builds it) as a compiled graph over packed sequences:
// RMSNorm, one q|k|v matmul, one rope with the per-head q/k RMS norms, causal grouped-query attention over the packed
// projection (within a sliding window when `window` > 0), a SwiGLU block as one gate|up matmul and gated, residuals
// added in the output projections, last-token pooling. What the graph codec's fuzzer is seeded with beside the
// encoder (fuzz/make_corpus.cpp).
#pragma once

#include <memory>
#include <optional>

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
                    std::optional<Tensor> residual = std::nullopt) {
    return b.matmul(in, p(name, {Dim::of(out), Dim::of(from)}), {.transpose_b = true, .residual = residual});
  };
  Tensor positions = b.sequence_positions(offsets, T);
  Tensor h = b.rms_norm(x, p("g1", {W}), 1e-6f);
  Tensor qkv = linear(h, "wqkv", (kHeads + 2 * kKvHeads) * kHead, kWidth);
  Tensor rotated = b.rope(qkv, positions, kHeads, 1e6f,
                          {.kv_heads = kKvHeads,
                           .query_norm = p("gq", {Dim::of(kHead)}),
                           .key_norm = p("gk", {Dim::of(kHead)}),
                           .eps = 1e-6f});
  Tensor a =
      b.attention_packed(rotated, offsets, kHeads, 4096, {.kv_heads = kKvHeads, .causal = true, .window = window});
  Tensor r = linear(a, "wo", kWidth, kHeads * kHead, x);
  h = b.rms_norm(r, p("g2", {W}), 1e-6f);
  Tensor gated = b.gated(linear(h, "wgu", 2 * kInner, kWidth), Activation::silu);
  Tensor y = linear(gated, "wd", kWidth, kInner, r);
  b.output("pooled", b.l2_normalize(b.pool(b.rms_norm(y, p("g3", {W}), 1e-6f), offsets, PoolMode::last)));
  return *b.build();
}

}  // namespace accel::graph::testing

// GraphBuilder's attention ops: q, k and v as three tensors or packed in one, each checked as graph_builder.cpp
// checks the other ops.
#include <fmt/format.h>

#include <cmath>
#include <utility>
#include <vector>

#include "accel/graph/graph.hpp"

namespace accel::graph {

namespace {

bool is_float(DType dtype) { return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16; }

// What both forms check alike: the offsets, the window and the longest sequence.
Status check_sequences(const TensorInfo& offsets, const AttentionOptions& options, std::int32_t max_length) {
  if (offsets.shape.size() != 1 || offsets.dtype != DType::i32)
    return invalid_argument("attention: offsets must be 1-D i32");
  if (options.window < 0) return invalid_argument(fmt::format("attention: window {} is negative", options.window));
  if (max_length < 1 || max_length > kMaxAttentionLength)
    return invalid_argument(
        fmt::format("attention: max_length {} must be in [1, {}]", max_length, kMaxAttentionLength));
  return Status();
}

// The op over `inputs` (q, k, v, offsets; k and v absent when packed), its attributes from the checked options.
Node attention_node(std::vector<std::uint32_t> inputs, std::int32_t heads, std::int32_t kv_heads, std::int64_t head_dim,
                    const AttentionOptions& options, std::int32_t max_length) {
  return {.kind = OpKind::attention,
          .inputs = std::move(inputs),
          .scale = options.scale.value_or(1.0f / std::sqrt(static_cast<float>(head_dim))),
          .heads = heads,
          .kv_heads = kv_heads,
          .causal = options.causal,
          .window = options.window,
          .max_length = max_length};
}

}  // namespace

Tensor GraphBuilder::attention(Tensor q, Tensor k, Tensor v, Tensor offsets, std::int32_t heads,
                               std::int32_t max_length, AttentionOptions options) {
  const TensorInfo* tq = info(q, "attention", "q");
  const TensorInfo* tk = info(k, "attention", "k");
  const TensorInfo* tv = info(v, "attention", "v");
  const TensorInfo* to = info(offsets, "attention", "offsets");
  if (tq == nullptr || tk == nullptr || tv == nullptr || to == nullptr) return {};
  if (tq->shape.size() != 2 || tk->shape.size() != 2 || tv->shape != tk->shape || tk->shape[0] != tq->shape[0] ||
      !is_float(tq->dtype) || tk->dtype != tq->dtype || tv->dtype != tq->dtype) {
    fail(invalid_argument(
        fmt::format("attention: q [rows, heads * head_dim], k and v [rows, kv_heads * head_dim] must be 2-D of one "
                    "floating dtype, got {}, {} and {}",
                    to_string(tq->shape), to_string(tk->shape), to_string(tv->shape))));
    return {};
  }
  if (Status bad = check_sequences(*to, options, max_length); !bad.ok()) {
    fail(std::move(bad));
    return {};
  }
  const Dim& width = tq->shape[1];
  if (heads < 1 || !width.is_constant() || width.offset % heads != 0 || width.offset / heads > 128) {
    fail(
        invalid_argument(fmt::format("attention: {} heads must divide the constant width {} into head dims of at "
                                     "most 128",
                                     heads, width.to_string())));
    return {};
  }
  const std::int64_t head_dim = width.offset / heads;
  const std::int32_t kv_heads = options.kv_heads == 0 ? heads : options.kv_heads;
  if (kv_heads < 1 || heads % kv_heads != 0 || tk->shape[1] != Dim::of(kv_heads * head_dim)) {
    fail(
        invalid_argument(fmt::format("attention: {} key/value heads must divide the {} heads, and k and v be "
                                     "[rows, {}], got {}",
                                     kv_heads, heads, kv_heads * head_dim, to_string(tk->shape))));
    return {};
  }
  return add(attention_node({q.id, k.id, v.id, offsets.id}, heads, kv_heads, head_dim, options, max_length),
             {.dtype = tq->dtype, .shape = tq->shape});
}

Tensor GraphBuilder::attention_packed(Tensor qkv, Tensor offsets, std::int32_t heads, std::int32_t max_length,
                                      AttentionOptions options) {
  const TensorInfo* t = info(qkv, "attention", "qkv");
  const TensorInfo* to = info(offsets, "attention", "offsets");
  if (t == nullptr || to == nullptr) return {};
  const std::int32_t kv_heads = options.kv_heads == 0 ? heads : options.kv_heads;
  const std::int64_t blocks = std::int64_t{heads} + 2 * std::int64_t{kv_heads};
  if (t->shape.size() != 2 || !is_float(t->dtype) || !t->shape[1].is_constant() || heads < 1 || kv_heads < 1 ||
      heads % kv_heads != 0 || t->shape[1].offset % blocks != 0 || t->shape[1].offset / blocks > 128 ||
      t->shape[1].offset == 0) {
    fail(invalid_argument(fmt::format(
        "attention: packed qkv must be 2-D floating [rows, (heads + 2 kv_heads) * head_dim] with {} heads, {} "
        "key/value heads (dividing them) and head dims of at most 128, got {} {}",
        heads, kv_heads, to_string(t->dtype), to_string(t->shape))));
    return {};
  }
  if (Status bad = check_sequences(*to, options, max_length); !bad.ok()) {
    fail(std::move(bad));
    return {};
  }
  const std::int64_t head_dim = t->shape[1].offset / blocks;
  return add(
      attention_node({qkv.id, Node::kNone, Node::kNone, offsets.id}, heads, kv_heads, head_dim, options, max_length),
      {.dtype = t->dtype, .shape = {t->shape[0], Dim::of(heads * head_dim)}});
}

}  // namespace accel::graph

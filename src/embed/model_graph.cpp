#include "embed/model_graph.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>

namespace accel::embed {

namespace {
using graph::Dim;
using graph::Tensor;

class Builder {
 public:
  Builder(const ModelFolder& folder, const ModelGraphOptions& options) : folder_(folder), dt_(options.compute) {
    b_.bucket("tokens", graph::Ladder::powers_of_two(kSmallestBucket, options.batch_tokens));
    b_.bucket("sequences", graph::Ladder::powers_of_two(1, options.batch_tokens));
  }

  // A parameter read twice (tied word embeddings and decoder) is one tensor of the graph.
  Tensor param(const Parameter& p) {
    if (const auto known = params_.find(p.name); known != params_.end()) return known->second;
    graph::Shape shape;
    for (std::uint64_t d : p.shape) shape.push_back(Dim::of(static_cast<std::int64_t>(d)));
    return params_[p.name] = b_.parameter(p.name, dt_, std::move(shape));
  }
  Tensor linear(Tensor x, const LinearParameters& w, Activation activation = Activation::identity,
                std::optional<Tensor> residual = std::nullopt) {
    return b_.matmul(x, param(w.weight),
                     {.transpose_b = true,
                      .bias = w.bias ? std::optional<Tensor>(param(*w.bias)) : std::nullopt,
                      .activation = activation,
                      .residual = residual});
  }
  // stream + h W^T (+ b): a pre-norm block's output added to the residual stream in its projection's epilogue (a
  // post-norm block's add stays in the norm after it, which reads both anyway: moved into the projection, MiniLM ran
  // 1.002x as fast on the H200, and the CPU paid a pass for it, §61).
  Tensor add_projection(Tensor stream, Tensor h, const LinearParameters& w) {
    return linear(h, w, Activation::identity, stream);
  }
  Tensor norm(Tensor x, const NormParameters& w, std::optional<Tensor> residual = std::nullopt) {
    return b_.layer_norm(x, param(w.gamma), w.beta ? std::optional<Tensor>(param(*w.beta)) : std::nullopt,
                         static_cast<float>(folder_.config.layer_norm_eps), residual);
  }

  // The word embeddings plus the token types' (the pair's type ids for a cross-encoder, else type 0's row), where the
  // family has them.
  Tensor with_token_types(const ModelParameters& p, Tensor words) {
    if (!p.token_types) return words;
    if (!takes_token_types(folder_)) return b_.binary(graph::BinaryOp::add, words, param(*p.token_types));
    Tensor types = b_.input("types", DType::i32, {Dim::sym("tokens")});
    return b_.binary(graph::BinaryOp::add, words, b_.gather(param(*p.token_types), types));
  }

  // The one row of each sequence the head reads, where it reads one (a [CLS] or last token's state).
  std::optional<graph::PoolMode> head_rows(const ModelParameters& p) const {
    switch (folder_.head) {
      case Head::embedding:
        if (folder_.pooling == graph::PoolMode::first || folder_.pooling == graph::PoolMode::last)
          return folder_.pooling;
        return std::nullopt;
      case Head::classifier: return p.classifier_hidden ? graph::PoolMode::first : graph::PoolMode::last;
      case Head::splade: return std::nullopt;
    }
    return std::nullopt;
  }

  // t, or with `rows` given, one row of each sequence: pooled by that mode.
  Tensor rows_of(Tensor t, Tensor offsets, std::optional<graph::PoolMode> rows) {
    return rows ? b_.pool(t, offsets, *rows) : t;
  }

  // The encoder's (or decoder's) last hidden states: [tokens, hidden], or with `rows` given [sequences, hidden], each
  // sequence's row `rows` names. Then the last layer past its attention (which still reads every token's keys and
  // values) computes those rows only: its projections, MLP and norms on one row a sequence.
  Tensor encoder(const ModelParameters& p, Tensor ids, Tensor offsets, std::optional<graph::PoolMode> rows) {
    if (folder_.config.decoder) return decoder(p, ids, offsets, rows);
    if (folder_.config.rotary_encoder) return rotary_encoder(p, ids, offsets, rows);
    const Dim tokens = Dim::sym("tokens");
    Tensor words = with_token_types(p, b_.gather(param(p.word_embeddings), ids));
    Tensor positions = b_.gather(param(p.position_embeddings), b_.sequence_positions(offsets, tokens));
    Tensor x = norm(words, p.embeddings_norm, positions);
    const auto heads = static_cast<std::int32_t>(folder_.config.num_attention_heads);
    const auto max_length = static_cast<std::int32_t>(folder_.max_sequence_length());
    for (std::size_t i = 0; i < p.layers.size(); ++i) {
      const EncoderLayerParameters& layer = p.layers[i];
      const auto pick = [&](Tensor t) { return i + 1 == p.layers.size() ? rows_of(t, offsets, rows) : t; };
      Tensor attended = layer.qkv ? b_.attention_packed(linear(x, *layer.qkv), offsets, heads, max_length)
                                  : b_.attention(linear(x, layer.query), linear(x, layer.key), linear(x, layer.value),
                                                 offsets, heads, max_length);
      Tensor h = norm(linear(pick(attended), layer.attention_output), layer.attention_norm, pick(x));
      x = norm(linear(linear(h, layer.intermediate, folder_.config.hidden_act), layer.output), layer.output_norm, h);
    }
    return x;
  }

  // A decoder (family.hpp): pre-norm layers of causal grouped-query attention over rotary q and k (normalised per
  // head first when the family has q/k norms) and a SwiGLU block, each added to the residual stream; a final norm.
  Tensor decoder(const ModelParameters& p, Tensor ids, Tensor offsets, std::optional<graph::PoolMode> rows) {
    const EncoderConfig& c = folder_.config;
    const Dim tokens = Dim::sym("tokens");
    const auto heads = static_cast<std::int32_t>(c.num_attention_heads);
    const auto kv_heads = static_cast<std::int32_t>(c.num_key_value_heads);
    const auto max_length = static_cast<std::int32_t>(folder_.max_sequence_length());
    const auto eps = static_cast<float>(c.layer_norm_eps);
    const auto theta = static_cast<float>(c.rope_theta);
    Tensor positions = b_.sequence_positions(offsets, tokens);
    // q or k alone: projected, each head RMS-normalised where the family has q/k norms, rotated (one rope).
    const auto project = [&](Tensor h, const LinearParameters& w, const std::optional<Parameter>& norm,
                             std::int32_t count) {
      graph::RopeOptions options{.eps = norm ? eps : 0.0f};
      if (norm) options.query_norm = param(*norm);
      return b_.rope(linear(h, w), positions, count, theta, options);
    };
    // q, k and v from one matmul: each head's norm and rotation one rope over the packed projection.
    const auto packed = [&](Tensor h, const DecoderLayerParameters& layer) {
      const bool normed = layer.query_norm && layer.key_norm;
      graph::RopeOptions options{.kv_heads = kv_heads, .eps = normed ? eps : 0.0f};
      if (normed) options.query_norm = param(*layer.query_norm), options.key_norm = param(*layer.key_norm);
      return b_.attention_packed(b_.rope(linear(h, *layer.qkv), positions, heads, theta, options), offsets, heads,
                                 max_length, {.kv_heads = kv_heads, .causal = c.causal});
    };
    Tensor x = b_.gather(param(p.word_embeddings), ids);
    for (std::size_t i = 0; i < p.decoder_layers.size(); ++i) {
      const DecoderLayerParameters& layer = p.decoder_layers[i];
      const auto pick = [&](Tensor t) { return i + 1 == p.decoder_layers.size() ? rows_of(t, offsets, rows) : t; };
      Tensor h = b_.rms_norm(x, param(layer.input_norm), eps);
      Tensor attended = layer.qkv
                            ? packed(h, layer)
                            : b_.attention(project(h, layer.query, layer.query_norm, heads),
                                           project(h, layer.key, layer.key_norm, kv_heads), linear(h, layer.value),
                                           offsets, heads, max_length, {.kv_heads = kv_heads, .causal = c.causal});
      x = add_projection(pick(x), pick(attended), layer.attention_output);
      h = b_.rms_norm(x, param(layer.post_attention_norm), eps);
      Tensor gated =
          layer.gate_up ? b_.gated(linear(h, *layer.gate_up), Activation::silu, layer.gate_up_layout)
                        : b_.binary(graph::BinaryOp::mul, linear(h, layer.gate), linear(h, layer.up), Activation::silu);
      x = add_projection(x, gated, layer.down);
    }
    return b_.rms_norm(x, param(*p.final_norm), eps);
  }

  // A rotary encoder (family.hpp): layers of bidirectional attention over rotary q and k, global or within the local
  // window, and a gated block. Pre-norm (ModernBERT): each block's input normalised and the block added to the
  // residual stream; a final LayerNorm. Post-norm (NomicBert, GTE): each block's output plus its input normalised.
  Tensor rotary_encoder(const ModelParameters& p, Tensor ids, Tensor offsets, std::optional<graph::PoolMode> rows) {
    const EncoderConfig& c = folder_.config;
    const auto heads = static_cast<std::int32_t>(c.num_attention_heads);
    const auto max_length = static_cast<std::int32_t>(folder_.max_sequence_length());
    // A window reaching past the longest sequence is every key: the attention runs without one.
    const auto window = c.local_window >= folder_.max_sequence_length() ? 0 : static_cast<std::int32_t>(c.local_window);
    Tensor positions = b_.sequence_positions(offsets, Dim::sym("tokens"));
    // Rotated by the rope op, or, with frequencies it cannot give, as x * cos + swapped(x) * sin from the tables.
    std::optional<Tensor> cos, sin;
    if (p.rotary_cos) cos = b_.gather(param(*p.rotary_cos), positions);
    if (p.rotary_sin) sin = b_.gather(param(*p.rotary_sin), positions);
    const auto rotated = [&](Tensor h, const LinearParameters& w, const std::optional<LinearParameters>& swapped,
                             float theta) {
      if (!swapped) return b_.rope(linear(h, w), positions, heads, theta);
      return b_.binary(graph::BinaryOp::add, b_.binary(graph::BinaryOp::mul, linear(h, w), *cos),
                       b_.binary(graph::BinaryOp::mul, linear(h, *swapped), *sin));
    };
    // The gated block's act(input(h)) * gate(h): one matmul and one gated pass where the two are stacked.
    const auto gate = [&](Tensor h, const RotaryEncoderLayerParameters& layer) {
      if (layer.input_gate) return b_.gated(linear(h, *layer.input_gate), c.hidden_act, layer.input_gate_layout);
      return b_.binary(graph::BinaryOp::mul, linear(h, layer.input), linear(h, layer.gate), c.hidden_act);
    };
    Tensor x = norm(with_token_types(p, b_.gather(param(p.word_embeddings), ids)), p.embeddings_norm);
    for (std::size_t i = 0; i < p.rotary_layers.size(); ++i) {
      const RotaryEncoderLayerParameters& layer = p.rotary_layers[i];
      const auto pick = [&](Tensor t) { return i + 1 == p.rotary_layers.size() ? rows_of(t, offsets, rows) : t; };
      const bool sliding = c.sliding_layers[i];
      const auto theta = static_cast<float>(sliding ? c.local_rope_theta : c.rope_theta);
      Tensor h = layer.attention_norm && !c.post_norm ? norm(x, *layer.attention_norm) : x;
      // One q|k|v matmul and one rope over it where they stack (not where the rotation goes through the tables).
      const graph::AttentionOptions options{.window = sliding ? window : 0};
      Tensor attended =
          layer.qkv ? b_.attention_packed(b_.rope(linear(h, *layer.qkv), positions, heads, theta, {.kv_heads = heads}),
                                          offsets, heads, max_length, options)
                    : b_.attention(rotated(h, layer.query, layer.query_swapped, theta),
                                   rotated(h, layer.key, layer.key_swapped, theta), linear(h, layer.value), offsets,
                                   heads, max_length, options);
      if (c.post_norm) {
        x = norm(linear(pick(attended), layer.attention_output), *layer.attention_norm, pick(x));
        Tensor gated = gate(x, layer);
        x = norm(linear(gated, layer.output), layer.mlp_norm, x);
        continue;
      }
      x = add_projection(pick(x), pick(attended), layer.attention_output);
      h = norm(x, layer.mlp_norm);
      Tensor gated = gate(h, layer);
      x = add_projection(x, gated, layer.output);
    }
    return p.final_layer_norm ? norm(x, *p.final_layer_norm) : x;
  }

  // The head over the encoder's output: every token's row, or with `rows` the one row a sequence it reads.
  Tensor head(const ModelParameters& p, Tensor x, Tensor offsets, std::optional<graph::PoolMode> rows) {
    const auto pool = [&](graph::PoolMode mode) { return rows ? x : b_.pool(x, offsets, mode); };
    switch (folder_.head) {
      case Head::embedding: {
        Tensor pooled = pool(folder_.pooling);
        for (std::size_t i = 0; i < p.dense.size(); ++i)
          pooled = linear(pooled, p.dense[i], folder_.dense[i].activation);
        return folder_.normalize ? b_.l2_normalize(pooled) : pooled;
      }
      case Head::classifier: {
        // The first token's state through two linears; a yes/no reranker: the difference of two vocabulary logits, at
        // the last token, which has seen the whole prompt (head_rows).
        Tensor row = pool(*head_rows(p));
        if (!p.classifier_hidden) return linear(row, *p.classifier_out);
        return linear(linear(row, *p.classifier_hidden, p.classifier_hidden_activation), *p.classifier_out);
      }
      case Head::splade: {
        Tensor h = norm(linear(x, *p.masked_lm_transform, p.masked_lm_activation), *p.masked_lm_norm);
        Tensor decoder = p.decoder_weight ? param(*p.decoder_weight) : param(p.word_embeddings);
        Tensor weights = b_.matmul(
            h, decoder, {.transpose_b = true, .bias = param(*p.decoder_bias), .activation = Activation::log1p_relu});
        return b_.pool(weights, offsets, graph::PoolMode::max);
      }
    }
    return x;
  }

  graph::GraphBuilder& builder() { return b_; }

 private:
  const ModelFolder& folder_;
  const DType dt_;
  graph::GraphBuilder b_;
  std::map<std::string, Tensor, std::less<>> params_;
};

}  // namespace

bool takes_token_types(const ModelFolder& folder) noexcept {
  return folder.head == Head::classifier && folder.config.type_vocab_size > 0;
}

namespace {

// invalid_argument when the folder's longest sequence is longer than the graph's attention takes.
Status check_sequence_length(const ModelFolder& folder) {
  if (folder.max_sequence_length() <= static_cast<std::uint32_t>(graph::kMaxAttentionLength)) return Status();
  return invalid_argument(
      fmt::format("{}: the longest sequence, {} tokens (max_seq_length, else the model's "
                  "positions), is above the {} that attention takes here",
                  folder.folder.native(), folder.max_sequence_length(), graph::kMaxAttentionLength));
}

}  // namespace

Result<std::shared_ptr<const graph::Graph>> model_graph(const ModelFolder& folder, const ModelWeights& weights,
                                                        const ModelGraphOptions& options) {
  ACCEL_RETURN_IF_ERROR(check_sequence_length(folder));
  Builder model(folder, options);
  graph::GraphBuilder& b = model.builder();
  Tensor ids = b.input("ids", DType::i32, {Dim::sym("tokens")});
  Tensor offsets = b.input("offsets", DType::i32, {Dim::sym("sequences", 1)}, graph::Padding::repeat_last);
  const std::optional<graph::PoolMode> rows = model.head_rows(weights.parameters);
  Tensor out = model.head(weights.parameters, model.encoder(weights.parameters, ids, offsets, rows), offsets, rows);
  if (options.compute != DType::f32) out = b.cast(out, DType::f32);
  b.output("output", out);
  return b.build();
}

Result<std::shared_ptr<const graph::Graph>> token_vectors_graph(const ModelFolder& folder, const ModelWeights& weights,
                                                                const ModelGraphOptions& options,
                                                                const graph::Graph& model) {
  ACCEL_RETURN_IF_ERROR(check_sequence_length(folder));
  Builder encoder(folder, options);
  graph::GraphBuilder& b = encoder.builder();
  Tensor ids = b.input("ids", DType::i32, {Dim::sym("tokens")});
  Tensor offsets = b.input("offsets", DType::i32, {Dim::sym("sequences", 1)}, graph::Padding::repeat_last);
  Tensor out = encoder.encoder(weights.parameters, ids, offsets, std::nullopt);
  if (options.compute != DType::f32) out = b.cast(out, DType::f32);
  b.output("output", out);
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const graph::Graph> graph, b.build());
  // Both graphs make the encoder's parameters first and in the same order, so these hold by construction; checked
  // because a run reading another parameter's bytes would answer wrong numbers, not fail.
  for (const graph::Graph::ParameterSlot& slot : graph->parameters()) {
    const std::string& name = graph->tensors()[slot.tensor].name;
    const graph::Graph::ParameterSlot* same = model.parameter(name);
    if (same == nullptr || same->offset != slot.offset || same->bytes != slot.bytes)
      return internal_error(
          fmt::format("token vectors graph: parameter '{}' is not where the model's graph has it", name));
  }
  return graph;
}

}  // namespace accel::embed

#include "embed/model_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <span>
#include <thread>

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

  // The encoder's (or decoder's) last hidden states, [tokens, hidden].
  Tensor encoder(const ModelParameters& p, Tensor ids, Tensor offsets) {
    if (folder_.config.decoder) return decoder(p, ids, offsets);
    if (folder_.config.rotary_encoder) return rotary_encoder(p, ids, offsets);
    const Dim tokens = Dim::sym("tokens");
    Tensor words = with_token_types(p, b_.gather(param(p.word_embeddings), ids));
    Tensor positions = b_.gather(param(p.position_embeddings), b_.sequence_positions(offsets, tokens));
    Tensor x = norm(words, p.embeddings_norm, positions);
    const auto heads = static_cast<std::int32_t>(folder_.config.num_attention_heads);
    const auto max_length = static_cast<std::int32_t>(folder_.max_sequence_length());
    for (const EncoderLayerParameters& layer : p.layers) {
      Tensor attended = layer.qkv ? b_.attention_packed(linear(x, *layer.qkv), offsets, heads, max_length)
                                  : b_.attention(linear(x, layer.query), linear(x, layer.key), linear(x, layer.value),
                                                 offsets, heads, max_length);
      Tensor h = norm(linear(attended, layer.attention_output), layer.attention_norm, x);
      x = norm(linear(linear(h, layer.intermediate, folder_.config.hidden_act), layer.output), layer.output_norm, h);
    }
    return x;
  }

  // A decoder (family.hpp): pre-norm layers of causal grouped-query attention over rotary q and k (normalised per
  // head first when the family has q/k norms) and a SwiGLU block, each added to the residual stream; a final norm.
  Tensor decoder(const ModelParameters& p, Tensor ids, Tensor offsets) {
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
    for (const DecoderLayerParameters& layer : p.decoder_layers) {
      Tensor h = b_.rms_norm(x, param(layer.input_norm), eps);
      Tensor attended = layer.qkv
                            ? packed(h, layer)
                            : b_.attention(project(h, layer.query, layer.query_norm, heads),
                                           project(h, layer.key, layer.key_norm, kv_heads), linear(h, layer.value),
                                           offsets, heads, max_length, {.kv_heads = kv_heads, .causal = c.causal});
      x = add_projection(x, attended, layer.attention_output);
      h = b_.rms_norm(x, param(layer.post_attention_norm), eps);
      Tensor gated =
          layer.gate_up ? b_.gated(linear(h, *layer.gate_up), Activation::silu)
                        : b_.binary(graph::BinaryOp::mul, linear(h, layer.gate), linear(h, layer.up), Activation::silu);
      x = add_projection(x, gated, layer.down);
    }
    return b_.rms_norm(x, param(*p.final_norm), eps);
  }

  // A rotary encoder (family.hpp): layers of bidirectional attention over rotary q and k, global or within the local
  // window, and a gated block. Pre-norm (ModernBERT): each block's input normalised and the block added to the
  // residual stream; a final LayerNorm. Post-norm (NomicBert, GTE): each block's output plus its input normalised.
  Tensor rotary_encoder(const ModelParameters& p, Tensor ids, Tensor offsets) {
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
      if (layer.input_gate) return b_.gated(linear(h, *layer.input_gate), c.hidden_act);
      return b_.binary(graph::BinaryOp::mul, linear(h, layer.input), linear(h, layer.gate), c.hidden_act);
    };
    Tensor x = norm(with_token_types(p, b_.gather(param(p.word_embeddings), ids)), p.embeddings_norm);
    for (std::size_t i = 0; i < p.rotary_layers.size(); ++i) {
      const RotaryEncoderLayerParameters& layer = p.rotary_layers[i];
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
        x = norm(linear(attended, layer.attention_output), *layer.attention_norm, x);
        Tensor gated = gate(x, layer);
        x = norm(linear(gated, layer.output), layer.mlp_norm, x);
        continue;
      }
      x = add_projection(x, attended, layer.attention_output);
      h = norm(x, layer.mlp_norm);
      Tensor gated = gate(h, layer);
      x = add_projection(x, gated, layer.output);
    }
    return p.final_layer_norm ? norm(x, *p.final_layer_norm) : x;
  }

  Tensor head(const ModelParameters& p, Tensor x, Tensor offsets) {
    switch (folder_.head) {
      case Head::embedding: {
        Tensor pooled = b_.pool(x, offsets, folder_.pooling);
        for (std::size_t i = 0; i < p.dense.size(); ++i)
          pooled = linear(pooled, p.dense[i], folder_.dense[i].activation);
        return folder_.normalize ? b_.l2_normalize(pooled) : pooled;
      }
      case Head::classifier: {
        // A yes/no reranker: the difference of two vocabulary logits, at the token that has seen the whole prompt.
        if (!p.classifier_hidden) return linear(b_.pool(x, offsets, graph::PoolMode::last), *p.classifier_out);
        Tensor first = b_.pool(x, offsets, graph::PoolMode::first);
        return linear(linear(first, *p.classifier_hidden, p.classifier_hidden_activation), *p.classifier_out);
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
  Tensor out = model.head(weights.parameters, model.encoder(weights.parameters, ids, offsets), offsets);
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
  Tensor out = encoder.encoder(weights.parameters, ids, offsets);
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

namespace {

// f32 values rounded once to `dtype` into `place`.
void store(DType dtype, std::span<const float> values, std::uint8_t* place) {
  if (dtype == DType::f32) {
    std::memcpy(place, values.data(), values.size() * 4);
    return;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t bits = dtype == DType::bf16 ? to_bfloat16(values[i]).bits : to_half(values[i]).bits;
    std::memcpy(place + i * 2, &bits, 2);
  }
}

// A rotary table's `count` first values (ParameterSource::RotaryTable), each angle taken in double.
std::vector<float> rotary_values(const ParameterSource::RotaryTable& table, std::size_t count) {
  std::vector<float> values(count);
  const std::uint32_t half = table.head_dim / 2;
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t position = k / table.width, j = k % table.width % table.head_dim;
    const double frequency = table.scale * std::pow(table.theta, -2.0 * static_cast<double>(j % half) / table.head_dim);
    const double angle = static_cast<double>(position) * frequency;
    values[k] = static_cast<float>(!table.sine ? std::cos(angle) : j < half ? -std::sin(angle) : std::sin(angle));
  }
  return values;
}

// Rows less other rows (ParameterSource::minus_row), taken in f32 and rounded once to the parameter's dtype.
Status convert_difference(DType dtype, std::uint64_t bytes, const SafetensorsFile& file, const std::string& name,
                          const ParameterSource& source, std::uint8_t* place) {
  ACCEL_ASSIGN_OR_RETURN(const TensorView view, file.tensor(name));
  ACCEL_ASSIGN_OR_RETURN(const std::vector<float> values, file.to_f32(name));
  const std::size_t count = bytes / size_of(dtype);
  const std::uint64_t row = view.shape.size() > 1 ? view.elements() / view.shape[0] : 1;
  if ((std::max(source.first_row, *source.minus_row) * row + count) > values.size())
    return invalid_argument(fmt::format("{}: {} elements, fewer than the graph's {} from rows {} and {}", name,
                                        view.elements(), count, source.first_row, *source.minus_row));
  std::vector<float> difference(count);
  for (std::size_t i = 0; i < count; ++i)
    difference[i] = values[source.first_row * row + i] - values[*source.minus_row * row + i];
  store(dtype, difference, place);
  return Status();
}

// The `bytes` of parameter `parameter` (of `dtype`) from its source, converted into `place`.
Status convert_source(const std::string& parameter, DType dtype, std::uint64_t bytes, const ModelWeights& weights,
                      std::uint8_t* place) {
  const auto source = weights.sources.find(parameter);
  if (source == weights.sources.end()) return internal_error(fmt::format("no source for parameter '{}'", parameter));
  if (source->second.rotary) {
    store(dtype, rotary_values(*source->second.rotary, bytes / size_of(dtype)), place);
    return Status();
  }
  const SafetensorsFile& file = weights.files[source->second.file];
  const std::string& name = source->second.tensor;
  ACCEL_ASSIGN_OR_RETURN(const TensorView view, file.tensor(name));
  const std::size_t element_bytes = size_of(dtype);
  const std::uint64_t row_elements = view.shape.size() > 1 ? view.elements() / view.shape[0] : 1;
  const std::uint64_t skip = source->second.first_row * row_elements * element_bytes;
  if (skip + bytes > view.elements() * element_bytes)
    return invalid_argument(fmt::format("{}: {} elements, fewer than the graph's {} bytes from row {}", name,
                                        view.elements(), bytes, source->second.first_row));
  if (source->second.minus_row) return convert_difference(dtype, bytes, file, name, source->second, place);
  // Each weight is converted straight into its place: the whole tensor, or the rows the graph reads of it (one
  // token-type row, positions up to the longest sequence, a part of a fused projection).
  const std::uint64_t first = source->second.first_row * row_elements, count = bytes / element_bytes;
  return dtype == DType::f32 ? file.copy_f32(name, first, {reinterpret_cast<float*>(place), count})
                             : file.copy_16bit(name, dtype, first, {reinterpret_cast<std::uint16_t*>(place), count});
}

// One parameter's rows, converted into its place in the weights buffer: from its source, or each part of a stacked
// one after the other.
Status convert_parameter(const graph::Graph& graph, const graph::Graph::ParameterSlot& slot,
                         const ModelWeights& weights, std::uint8_t* place) {
  const graph::TensorInfo& t = graph.tensors()[slot.tensor];
  const auto stacked = weights.stacked.find(t.name);
  if (stacked == weights.stacked.end()) return convert_source(t.name, t.dtype, slot.bytes, weights, place);
  std::uint64_t done = 0;
  for (const Parameter& part : stacked->second) {
    std::uint64_t bytes = size_of(t.dtype);
    for (std::uint64_t d : part.shape) bytes *= d;
    if (done + bytes > slot.bytes)
      return internal_error(fmt::format("stacked parameter '{}': its parts exceed its {} bytes", t.name, slot.bytes));
    ACCEL_RETURN_IF_ERROR(convert_source(part.name, t.dtype, bytes, weights, place + done));
    done += bytes;
  }
  if (done != slot.bytes)
    return internal_error(
        fmt::format("stacked parameter '{}': its parts fill {} of its {} bytes", t.name, done, slot.bytes));
  return Status();
}

}  // namespace

Result<std::vector<std::uint8_t>> model_weight_bytes(const graph::Graph& graph, const ModelWeights& weights) {
  std::vector<std::uint8_t> bytes(graph.weight_bytes());
  const std::vector<graph::Graph::ParameterSlot>& slots = graph.parameters();
  // The parameters are independent: converted on several threads, the largest first so that the word
  // embeddings (often half of the model) start at once. Each slot's status is kept, and the first one's returned.
  std::vector<std::size_t> order(slots.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return slots[a].bytes > slots[b].bytes; });
  std::vector<Status> statuses(slots.size());
  std::atomic<std::size_t> next{0};
  const auto convert = [&] {
    for (std::size_t i = next.fetch_add(1); i < order.size(); i = next.fetch_add(1)) {
      const graph::Graph::ParameterSlot& slot = slots[order[i]];
      statuses[order[i]] = convert_parameter(graph, slot, weights, bytes.data() + slot.offset);
    }
  };
  {
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
    std::vector<std::jthread> helpers;
    for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(convert);
    convert();
  }
  for (const Status& status : statuses) ACCEL_RETURN_IF_ERROR(status);
  return bytes;
}

}  // namespace accel::embed

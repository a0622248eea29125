#include "embed/model_weights.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace accel::embed {
namespace {

// Enough for the reader to see what is wrong without a message the size of the checkpoint.
constexpr std::size_t kProblemsShown = 8;

using Shape = std::vector<std::uint64_t>;

// Finds tensors of one file by their candidate names, registers each as a parameter, and keeps every problem.
class Resolver {
 public:
  Resolver(ModelWeights& weights, std::size_t file, std::string_view base_prefix)
      : weights_(weights), file_(file), base_prefix_(base_prefix) {}

  // The first of `names` (each also under the base prefix) the file holds, which must be `stored` in shape; the
  // parameter takes `rows` rows of it from `first_row` (0: all of them) and is `flat` when it is one row.
  std::optional<Parameter> find(std::string parameter, std::vector<std::string> names, Shape stored,
                                std::uint64_t first_row = 0, std::uint64_t rows = 0, bool flat = false,
                                bool required = true) {
    const SafetensorsFile& file = weights_.files[file_];
    std::string found;
    for (const std::string& name : names)
      for (const std::string& candidate : {name, std::string(base_prefix_) + name})
        if (found.empty() && file.contains(candidate)) found = candidate;
    ++looked_for_;
    if (found.empty()) {
      if (required) problem(fmt::format("'{}' is missing", names.front()));
      return std::nullopt;
    }
    const TensorView view = *file.tensor(found);
    if (!std::equal(view.shape.begin(), view.shape.end(), stored.begin(), stored.end())) {
      problem(fmt::format("'{}' is [{}], not [{}]", found, fmt::join(view.shape, ", "), fmt::join(stored, ", ")));
      return std::nullopt;
    }
    if (!is_float(view.dtype)) {
      problem(fmt::format("'{}' is {}, not a float type", found, to_string(view.dtype)));
      return std::nullopt;
    }
    Shape shape = stored;
    if (rows != 0) shape[0] = rows;
    if (flat) shape.erase(shape.begin());
    weights_.sources[parameter] = {.file = file_, .tensor = found, .first_row = first_row};
    return Parameter{.name = std::move(parameter), .shape = std::move(shape)};
  }

  Parameter tensor(const std::string& name, Shape stored) {
    return find(name, {name}, std::move(stored)).value_or(Parameter{});
  }

  LinearParameters linear(const std::string& stem, std::uint64_t out, std::uint64_t in, bool bias = true) {
    LinearParameters linear{.weight = tensor(stem + ".weight", {out, in}), .bias = std::nullopt};
    if (bias) linear.bias = tensor(stem + ".bias", {out});
    return linear;
  }

  NormParameters norm(const std::string& stem, std::uint64_t width, bool bias = true) {
    NormParameters norm{
        .gamma = find(stem + ".weight", {stem + ".weight", stem + ".gamma"}, {width}).value_or(Parameter{}),
        .beta = std::nullopt};
    if (bias) norm.beta = find(stem + ".bias", {stem + ".bias", stem + ".beta"}, {width}).value_or(Parameter{});
    return norm;
  }

  // Rows [first, first + rows) of the linear layer `stem` stored [stored_rows, in], as the parameter `name`.
  LinearParameters rows_of(const std::string& stem, const std::string& name, std::uint64_t stored_rows,
                           std::uint64_t in, std::uint64_t first, std::uint64_t rows, bool bias) {
    LinearParameters linear{
        .weight = find(name + ".weight", {stem + ".weight"}, {stored_rows, in}, first, rows).value_or(Parameter{}),
        .bias = std::nullopt};
    if (bias) linear.bias = find(name + ".bias", {stem + ".bias"}, {stored_rows}, first, rows).value_or(Parameter{});
    return linear;
  }

  // A parameter made of `parts`' rows in order (ModelWeights::stacked), under `name`.
  Parameter stacked(std::string name, const std::vector<Parameter>& parts) {
    Parameter stacked{.name = std::move(name), .shape = parts.front().shape};
    stacked.shape[0] = 0;
    for (const Parameter& part : parts) stacked.shape[0] += part.shape[0];
    weights_.stacked[stacked.name] = {.parts = parts};
    return stacked;
  }

  // A parameter whose values are computed (ParameterSource::rotary), not read.
  Parameter computed(std::string name, Shape shape, ParameterSource::RotaryTable table) {
    weights_.sources[name] = {.file = file_, .tensor = "", .first_row = 0, .minus_row = std::nullopt, .rotary = table};
    return Parameter{.name = std::move(name), .shape = std::move(shape)};
  }

  void problem(std::string text) {
    if (++problems_ <= kProblemsShown) shown_.push_back(std::move(text));
  }

  Status finish(std::string_view what) const {
    if (problems_ == 0) return Status();
    return invalid_argument(fmt::format("safetensors {}: {} of the {} tensors {} reads {} wrong: {}{}",
                                        weights_.files[file_].path().native(), problems_, looked_for_, what,
                                        problems_ == 1 ? "is" : "are", fmt::join(shown_, "; "),
                                        problems_ > kProblemsShown ? "; ..." : ""));
  }

 private:
  ModelWeights& weights_;
  std::size_t file_;
  std::string_view base_prefix_;
  std::size_t looked_for_ = 0;
  std::size_t problems_ = 0;
  std::vector<std::string> shown_;
};

void find_decoder(const EncoderConfig& c, const EncoderNames& names, Resolver& r, ModelParameters& p) {
  const std::uint64_t hidden = c.hidden_size, inner = c.intermediate_size, head = c.head_size();
  const std::uint64_t q_width = head * c.num_attention_heads, kv_width = head * c.num_key_value_heads;
  p.word_embeddings = r.tensor(names.word_embeddings, {c.vocab_size, hidden});
  for (const DecoderLayerNames& layer : names.decoder_layers) {
    DecoderLayerParameters d{.input_norm = r.tensor(layer.input_norm + ".weight", {hidden}),
                             .query = r.linear(layer.query, q_width, hidden, c.qkv_bias),
                             .key = r.linear(layer.key, kv_width, hidden, c.qkv_bias),
                             .value = r.linear(layer.value, kv_width, hidden, c.qkv_bias),
                             .query_norm = std::nullopt,
                             .key_norm = std::nullopt,
                             .attention_output = r.linear(layer.attention_output, hidden, q_width, c.output_bias),
                             .post_attention_norm = r.tensor(layer.post_attention_norm + ".weight", {hidden}),
                             .gate = r.linear(layer.gate, inner, hidden, false),
                             .up = r.linear(layer.up, inner, hidden, false),
                             .down = r.linear(layer.down, hidden, inner, false)};
    if (c.qk_norm) {
      d.query_norm = r.tensor(layer.query_norm + ".weight", {head});
      d.key_norm = r.tensor(layer.key_norm + ".weight", {head});
    }
    p.decoder_layers.push_back(std::move(d));
  }
  p.final_norm = r.tensor(names.final_norm + ".weight", {hidden});
}

// The token-type table: the whole of it for a cross-encoder (indexed by the pair's type ids), else the row of type 0,
// which every token of a single text reads.
void find_token_types(const ModelFolder& folder, const EncoderNames& names, Resolver& r, ModelParameters& p) {
  const EncoderConfig& c = folder.config;
  if (names.token_type_embeddings.empty() || c.type_vocab_size == 0) return;
  const bool pairs = folder.head == Head::classifier;
  p.token_types = r.find(pairs ? names.token_type_embeddings : names.token_type_embeddings + "[0]",
                         {names.token_type_embeddings}, {c.type_vocab_size, c.hidden_size}, 0, pairs ? 0 : 1, !pairs);
}

// q's (index 0) or k's (index 1) rows of the fused qkv with the halves of every head swapped: the second half's
// rows, then the first's, head by head.
LinearParameters swapped_halves(const EncoderConfig& c, const std::string& qkv, const char* part, std::uint64_t index,
                                Resolver& r) {
  const std::uint64_t hidden = c.hidden_size, head = c.head_size(), half = head / 2;
  std::vector<Parameter> weights, biases;
  for (std::uint64_t h = 0; h < c.num_attention_heads; ++h) {
    for (const std::uint64_t second : {1, 0}) {
      const std::string name = fmt::format("{}[{}.head{}.half{}]", qkv, part, h, second);
      LinearParameters rows =
          r.rows_of(qkv, name, 3 * hidden, hidden, index * hidden + h * head + second * half, half, c.qkv_bias);
      weights.push_back(std::move(rows.weight));
      if (rows.bias) biases.push_back(std::move(*rows.bias));
    }
  }
  LinearParameters swapped{.weight = r.stacked(fmt::format("{}[{} swapped].weight", qkv, part), weights),
                           .bias = std::nullopt};
  if (c.qkv_bias) swapped.bias = r.stacked(fmt::format("{}[{} swapped].bias", qkv, part), biases);
  return swapped;
}

// A rotary encoder (ModernBERT, NomicBert, GTE): the fused qkv read as three parameters of its rows; the gated
// block's input and gate as two row ranges of one linear layer or as two layers.
void find_rotary_encoder(const ModelFolder& folder, const EncoderNames& names, Resolver& r, ModelParameters& p) {
  const EncoderConfig& c = folder.config;
  const std::uint64_t hidden = c.hidden_size, inner = c.intermediate_size;
  p.word_embeddings = r.tensor(names.word_embeddings, {c.vocab_size, hidden});
  find_token_types(folder, names, r, p);
  p.embeddings_norm = r.norm(names.embeddings_norm, hidden, c.norm_bias);
  for (const RotaryEncoderLayerNames& layer : names.rotary_layers) {
    const auto qkv = [&](const char* part, std::uint64_t index) {
      return r.rows_of(layer.qkv, layer.qkv + "[" + part + "]", 3 * hidden, hidden, index * hidden, hidden, c.qkv_bias);
    };
    const auto mlp_in = [&](const char* part, std::uint64_t index) {
      if (!layer.mlp_gate.empty())
        return r.linear(index == 0 ? layer.mlp_in : layer.mlp_gate, inner, hidden, c.mlp_bias);
      const std::uint64_t rows = layer.gate_rows_first ? 1 - index : index;
      return r.rows_of(layer.mlp_in, layer.mlp_in + "[" + part + "]", 2 * inner, hidden, rows * inner, inner,
                       c.mlp_bias);
    };
    RotaryEncoderLayerParameters l{.attention_norm = std::nullopt,
                                   .query = qkv("q", 0),
                                   .key = qkv("k", 1),
                                   .value = qkv("v", 2),
                                   .attention_output = r.linear(layer.attention_output, hidden, hidden, c.output_bias),
                                   .mlp_norm = r.norm(layer.mlp_norm, hidden, c.norm_bias),
                                   .input = mlp_in("input", 0),
                                   .gate = mlp_in("gate", 1),
                                   .output = r.linear(layer.mlp_out, hidden, inner, c.mlp_out_bias)};
    if (!layer.attention_norm.empty()) l.attention_norm = r.norm(layer.attention_norm, hidden, c.norm_bias);
    if (c.rope_scale != 1.0 && !l.query.weight.name.empty()) {
      l.query_swapped = swapped_halves(c, layer.qkv, "q", 0, r);
      l.key_swapped = swapped_halves(c, layer.qkv, "k", 1, r);
    }
    p.rotary_layers.push_back(std::move(l));
  }
  if (!names.final_norm.empty()) p.final_layer_norm = r.norm(names.final_norm, hidden, c.norm_bias);
  if (c.rope_scale != 1.0) {
    const auto table = [&](const char* name, bool sine) {
      return r.computed(name, {folder.max_sequence_length(), hidden},
                        {.theta = c.rope_theta,
                         .scale = c.rope_scale,
                         .head_dim = c.head_size(),
                         .width = c.hidden_size,
                         .sine = sine});
    };
    p.rotary_cos = table("rotary.cos", false);
    p.rotary_sin = table("rotary.sin", true);
  }
}

void find_encoder(const ModelFolder& folder, Resolver& r, ModelParameters& p) {
  const EncoderConfig& c = folder.config;
  const std::uint64_t hidden = c.hidden_size, inner = c.intermediate_size;
  const EncoderNames names = folder.family->encoder_names(c.num_hidden_layers);
  if (c.decoder) return find_decoder(c, names, r, p);
  if (c.rotary_encoder) return find_rotary_encoder(folder, names, r, p);
  p.word_embeddings = r.tensor(names.word_embeddings, {c.vocab_size, hidden});
  p.position_embeddings = r.find(names.position_embeddings, {names.position_embeddings},
                                 {c.max_position_embeddings, hidden}, c.position_offset, folder.max_sequence_length())
                              .value_or(Parameter{});
  find_token_types(folder, names, r, p);
  p.embeddings_norm = r.norm(names.embeddings_norm, hidden);
  for (const EncoderLayerNames& layer : names.layers)
    p.layers.push_back({.query = r.linear(layer.query, hidden, hidden),
                        .key = r.linear(layer.key, hidden, hidden),
                        .value = r.linear(layer.value, hidden, hidden),
                        .attention_output = r.linear(layer.attention_output, hidden, hidden),
                        .attention_norm = r.norm(layer.attention_norm, hidden),
                        .intermediate = r.linear(layer.intermediate, inner, hidden),
                        .output = r.linear(layer.output, hidden, inner),
                        .output_norm = r.norm(layer.output_norm, hidden)});
}

// The parameter of `parts`' rows stacked (ModelWeights::Stacked, `rows_per_turn` as there), registered in `weights`
// under a name of its own.
Parameter stack(ModelWeights& weights, const std::vector<Parameter>& parts, std::uint64_t rows_per_turn) {
  Parameter stacked{.name = parts[0].name, .shape = parts[0].shape};
  for (std::size_t i = 1; i < parts.size(); ++i) {
    stacked.name += (rows_per_turn > 0 ? "|" : "+") + parts[i].name;
    stacked.shape[0] += parts[i].shape[0];
  }
  weights.stacked[stacked.name] = {.parts = parts, .rows_per_turn = rows_per_turn};
  return stacked;
}

// Projections of one input as one: their weights' rows stacked (and their biases, where all or none have one), so
// that one matmul of the summed width does the work of several; `rows_per_turn` as ModelWeights::Stacked says, for
// parts of equal widths. Nothing where they differ.
std::optional<LinearParameters> stack_linears(ModelWeights& weights, const std::vector<const LinearParameters*>& parts,
                                              std::uint64_t rows_per_turn = 0) {
  for (const LinearParameters* part : parts) {
    if (part->weight.shape.size() != 2 || part->weight.shape[1] != parts[0]->weight.shape[1] ||
        part->bias.has_value() != parts[0]->bias.has_value() ||
        (rows_per_turn > 0 && part->weight.shape[0] != parts[0]->weight.shape[0]))
      return std::nullopt;
  }
  std::vector<Parameter> stacked_weights, stacked_biases;
  for (const LinearParameters* part : parts) {
    stacked_weights.push_back(part->weight);
    if (part->bias) stacked_biases.push_back(*part->bias);
  }
  LinearParameters linear{.weight = stack(weights, stacked_weights, rows_per_turn), .bias = std::nullopt};
  if (!stacked_biases.empty()) linear.bias = stack(weights, stacked_biases, rows_per_turn);
  return linear;
}

// A gated block's two projections as one (GraphBuilder::gated): their rows taking turns 8 at a time where their
// width is a multiple of 8 (GateLayout::groups_of_8, which a GPU computes as one product with the gate), else
// stacked in halves.
std::optional<LinearParameters> stack_gated(ModelWeights& weights, const LinearParameters& first,
                                            const LinearParameters& second, graph::GateLayout& layout) {
  const bool groups = first.weight.shape.size() == 2 && first.weight.shape[0] % 8 == 0;
  std::optional<LinearParameters> stacked = stack_linears(weights, {&first, &second}, groups ? 8 : 0);
  layout = groups && stacked ? graph::GateLayout::groups_of_8 : graph::GateLayout::halves;
  return stacked;
}

// q, k and v (attention_packed reads them as one, through one rope), and a gated block's two projections
// (GraphBuilder::gated). Not q|k|v where one rope cannot take them: a decoder with a norm for q's heads or k's only,
// a rotary encoder whose rotation goes through the tables (query_swapped).
void stack_projections(ModelWeights& weights) {
  for (EncoderLayerParameters& layer : weights.parameters.layers)
    layer.qkv = stack_linears(weights, {&layer.query, &layer.key, &layer.value});
  for (DecoderLayerParameters& layer : weights.parameters.decoder_layers) {
    if (layer.query_norm.has_value() == layer.key_norm.has_value())
      layer.qkv = stack_linears(weights, {&layer.query, &layer.key, &layer.value});
    layer.gate_up = stack_gated(weights, layer.gate, layer.up, layer.gate_up_layout);
  }
  for (RotaryEncoderLayerParameters& layer : weights.parameters.rotary_layers) {
    if (!layer.query_swapped) layer.qkv = stack_linears(weights, {&layer.query, &layer.key, &layer.value});
    layer.input_gate = stack_gated(weights, layer.input, layer.gate, layer.input_gate_layout);
  }
}

void find_head(const ModelFolder& folder, Resolver& r, ModelWeights& weights) {
  ModelParameters& p = weights.parameters;
  const EncoderConfig& c = folder.config;
  const std::uint64_t hidden = c.hidden_size;
  if (folder.yes_no) {
    // One row of the vocabulary head less another: the checkpoint's lm_head, or the word embeddings it is tied to.
    const YesNoReranker& yes_no = *folder.yes_no;
    const std::string head = yes_no.tied ? folder.family->encoder_names(0).word_embeddings : "lm_head.weight";
    const std::string name = fmt::format("{}[{}] - {}[{}]", head, yes_no.yes_token, head, yes_no.no_token);
    // The ids come from tokenizer.json (model_loading.cpp); a folder read without it has none.
    const auto row = [&](std::int32_t id) { return id >= 0 && static_cast<std::uint32_t>(id) < c.vocab_size; };
    if (!row(yes_no.yes_id) || !row(yes_no.no_id)) {
      r.problem(fmt::format("the rows of '{}' and '{}' are not known (ids {} and {}, of {} rows)", yes_no.yes_token,
                            yes_no.no_token, yes_no.yes_id, yes_no.no_id, c.vocab_size));
      return;
    }
    std::optional<Parameter> weight =
        r.find(name, {head}, {c.vocab_size, hidden}, static_cast<std::uint64_t>(yes_no.yes_id), 1, false, false);
    if (weight)
      weights.sources[name].minus_row = static_cast<std::uint64_t>(yes_no.no_id);
    else if (!weights.files[0].contains(head) &&
             !weights.files[0].contains(std::string(folder.family->base_prefix) + head))
      r.problem(
          fmt::format("'{}' is missing (the rows of '{}' and '{}' the yes/no reranker reads; config.json's "
                      "tie_word_embeddings is {})",
                      head, yes_no.yes_token, yes_no.no_token, yes_no.tied));
    p.classifier_out = LinearParameters{.weight = weight.value_or(Parameter{}), .bias = std::nullopt};
  } else if (folder.head == Head::classifier) {
    const ClassifierNames names = folder.family->classifier_names();
    p.classifier_hidden = r.linear(names.hidden, hidden, hidden);
    p.classifier_out = r.linear(names.out, c.num_labels, hidden);
    p.classifier_hidden_activation = names.activation;
  } else if (folder.head == Head::splade) {
    const MaskedLmNames names = folder.family->masked_lm_names(c);
    p.masked_lm_transform = r.linear(names.transform, hidden, hidden);
    p.masked_lm_norm = r.norm(names.transform_norm, hidden);
    p.masked_lm_activation = names.activation;
    // A tied decoder is saved once, as the word embeddings; its bias under either of the names transformers uses.
    p.decoder_weight = r.find(names.decoder_weight, {names.decoder_weight}, {c.vocab_size, hidden}, 0, 0, false, false);
    const std::string decoder_stem = names.decoder_weight.substr(0, names.decoder_weight.rfind('.'));
    p.decoder_bias =
        r.find(names.decoder_bias, {names.decoder_bias, decoder_stem + ".bias"}, {c.vocab_size}).value_or(Parameter{});
  }
}

}  // namespace

Result<ModelWeights> ModelWeights::open(const ModelFolder& folder) {
  ModelWeights weights;
  ACCEL_ASSIGN_OR_RETURN(SafetensorsFile transformer, SafetensorsFile::open(folder.weights));
  weights.files.push_back(std::move(transformer));
  for (const DenseModule& dense : folder.dense) {
    ACCEL_ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::open(dense.weights));
    weights.files.push_back(std::move(file));
  }
  Resolver encoder(weights, 0, folder.family->base_prefix);
  find_encoder(folder, encoder, weights.parameters);
  find_head(folder, encoder, weights);
  ACCEL_RETURN_IF_ERROR(encoder.finish(fmt::format("a {}-layer {} {} model", folder.config.num_hidden_layers,
                                                   folder.family->name, to_string(folder.head))));
  stack_projections(weights);
  for (std::size_t i = 0; i < folder.dense.size(); ++i) {
    const DenseModule& module = folder.dense[i];
    Resolver dense(weights, i + 1, "");
    LinearParameters linear{
        .weight =
            dense.find(fmt::format("dense.{}.weight", i), {"linear.weight"}, {module.out_features, module.in_features})
                .value_or(Parameter{}),
        .bias = std::nullopt};
    if (module.bias) linear.bias = dense.find(fmt::format("dense.{}.bias", i), {"linear.bias"}, {module.out_features});
    ACCEL_RETURN_IF_ERROR(dense.finish("a Dense module"));
    weights.parameters.dense.push_back(std::move(linear));
  }
  return weights;
}

}  // namespace accel::embed

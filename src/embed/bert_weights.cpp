#include "embed/bert_weights.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace accel::embed {
namespace {

WeightPair linear(const std::string& stem, std::uint64_t out, std::uint64_t in) {
  return {.weight = {stem + ".weight", {out, in}}, .bias = {stem + ".bias", {out}}};
}

WeightPair layer_norm(const std::string& stem, std::uint64_t width) {
  return {.weight = {stem + ".weight", {width}}, .bias = {stem + ".bias", {width}}};
}

// Enough for the reader to see what is wrong without a message the size of the checkpoint.
constexpr std::size_t kProblemsShown = 8;

}  // namespace

BertWeights BertWeights::expected(const BertConfig& config, const std::string& prefix) {
  const std::uint64_t hidden = config.hidden_size;
  const std::string embeddings = prefix + "embeddings.";
  BertWeights weights{
      .prefix = prefix,
      .word_embeddings = {embeddings + "word_embeddings.weight", {config.vocab_size, hidden}},
      .position_embeddings = {embeddings + "position_embeddings.weight", {config.max_position_embeddings, hidden}},
      .token_type_embeddings = {embeddings + "token_type_embeddings.weight", {config.type_vocab_size, hidden}},
      .embeddings_norm = layer_norm(embeddings + "LayerNorm", hidden),
  };
  for (std::uint32_t i = 0; i < config.num_hidden_layers; ++i) {
    const std::string layer = fmt::format("{}encoder.layer.{}.", prefix, i);
    weights.layers.push_back({
        .query = linear(layer + "attention.self.query", hidden, hidden),
        .key = linear(layer + "attention.self.key", hidden, hidden),
        .value = linear(layer + "attention.self.value", hidden, hidden),
        .attention_output = linear(layer + "attention.output.dense", hidden, hidden),
        .attention_norm = layer_norm(layer + "attention.output.LayerNorm", hidden),
        .intermediate = linear(layer + "intermediate.dense", config.intermediate_size, hidden),
        .output = linear(layer + "output.dense", hidden, config.intermediate_size),
        .output_norm = layer_norm(layer + "output.LayerNorm", hidden),
    });
  }
  return weights;
}

std::vector<const WeightSpec*> BertWeights::all() const {
  std::vector<const WeightSpec*> specs{&word_embeddings, &position_embeddings, &token_type_embeddings,
                                       &embeddings_norm.weight, &embeddings_norm.bias};
  for (const BertLayerWeights& layer : layers)
    for (const WeightPair* pair : {&layer.query, &layer.key, &layer.value, &layer.attention_output,
                                   &layer.attention_norm, &layer.intermediate, &layer.output, &layer.output_norm}) {
      specs.push_back(&pair->weight);
      specs.push_back(&pair->bias);
    }
  return specs;
}

Result<BertWeights> BertWeights::validate(const SafetensorsFile& file, const BertConfig& config) {
  std::string prefix;
  if (!file.contains("embeddings.word_embeddings.weight")) {
    if (!file.contains("bert.embeddings.word_embeddings.weight"))
      return invalid_argument(
          fmt::format("safetensors {}: not a BERT checkpoint: neither 'embeddings.word_embeddings.weight' nor "
                      "'bert.embeddings.word_embeddings.weight' is there",
                      file.path().native()));
    prefix = "bert.";
  }
  BertWeights weights = expected(config, prefix);

  std::vector<std::string> problems;
  std::size_t count = 0;
  for (const WeightSpec* spec : weights.all()) {
    std::string problem;
    if (!file.contains(spec->name)) {
      problem = fmt::format("'{}' is missing", spec->name);
    } else {
      const TensorView view = *file.tensor(spec->name);
      if (!std::equal(view.shape.begin(), view.shape.end(), spec->shape.begin(), spec->shape.end()))
        problem = fmt::format("'{}' is [{}], not [{}]", spec->name, fmt::join(view.shape, ", "),
                              fmt::join(spec->shape, ", "));
      else if (!is_float(view.dtype))
        problem = fmt::format("'{}' is {}, not a float type", spec->name, to_string(view.dtype));
    }
    if (problem.empty()) continue;
    if (++count <= kProblemsShown) problems.push_back(std::move(problem));
  }
  if (count == 0) return weights;
  return invalid_argument(
      fmt::format("safetensors {}: {} of the {} tensors a {}-layer BERT encoder reads {} wrong: {}{}",
                  file.path().native(), count, weights.all().size(), config.num_hidden_layers,
                  count == 1 ? "is" : "are", fmt::join(problems, "; "), count > kProblemsShown ? "; ..." : ""));
}

}  // namespace accel::embed

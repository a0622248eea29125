// accel::embed::ModelFolder — the configuration of a sentence-transformers folder, read and checked before any
// weight is loaded, so that an unsupported model is refused up front with the file and field that rule it out.
//
// Supported: modules.json listing a Transformer, then a mean-tokens Pooling, then optionally a Normalize; the
// Transformer a BERT encoder (config.json's model_type "bert", absolute position embeddings, GELU either exact
// or tanh-approximated) with its weights in model.safetensors and its tokenizer in tokenizer.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "accel/core/result.hpp"

namespace accel::embed {

// The two GELUs BERT checkpoints name: "gelu" is the exact one, x·Φ(x) with erf; "gelu_new" and
// "gelu_pytorch_tanh" are the tanh approximation. They differ by up to about 5e-4 per activation, more than a
// comparison with f32 reference embeddings tolerates.
enum class Gelu : std::uint8_t { erf, tanh };

// config.json of a BERT encoder: the fields the encoder's shapes and arithmetic depend on.
struct BertConfig {
  std::uint32_t hidden_size = 0;
  std::uint32_t num_attention_heads = 0;
  std::uint32_t num_hidden_layers = 0;
  std::uint32_t intermediate_size = 0;
  Gelu hidden_act = Gelu::erf;
  double layer_norm_eps = 0;
  std::uint32_t max_position_embeddings = 0;
  std::uint32_t vocab_size = 0;
  std::uint32_t type_vocab_size = 0;
  std::uint32_t pad_token_id = 0;

  [[nodiscard]] std::uint32_t head_size() const noexcept { return hidden_size / num_attention_heads; }
};

struct ModelFolder {
  std::filesystem::path folder;
  BertConfig config;
  std::uint32_t max_seq_length = 0;  // sentence_bert_config.json's, before the cap by the position embeddings
  bool do_lower_case = false;
  bool normalize = false;  // modules.json ends with a Normalize: embeddings are scaled to unit length
  std::filesystem::path tokenizer_json;
  std::filesystem::path weights;  // model.safetensors

  // Tokens the encoder can take, special tokens included: what the folder asks for, at most what the position
  // embeddings cover.
  [[nodiscard]] std::uint32_t max_sequence_length() const noexcept {
    return max_seq_length < config.max_position_embeddings ? max_seq_length : config.max_position_embeddings;
  }

  // invalid_argument naming the file and the field for anything missing, malformed or unsupported.
  static Result<ModelFolder> read(const std::filesystem::path& folder);
};

}  // namespace accel::embed

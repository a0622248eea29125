// accel::embed::Family — what one model family is: how its config.json reads, and the names its checkpoints
// give the tensors of the encoder and of the heads that sit on it. Every family here is a post-norm transformer
// encoder (embeddings, then layers of self-attention and a feed-forward block, each followed by a LayerNorm), so
// one graph builder (embed/model_graph.cpp) runs them all from these names.
//
// Adding a family is one file in this folder defining a Family, and one line in registry.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/epilogue.hpp"
#include "accel/core/result.hpp"
#include "embed/json_fields.hpp"

namespace accel::embed {

// config.json of an encoder, in the terms the graph builder uses whatever the family calls them.
struct EncoderConfig {
  std::string model_type;
  std::vector<std::string> architectures;
  std::uint32_t hidden_size = 0;
  std::uint32_t num_attention_heads = 0;
  std::uint32_t num_hidden_layers = 0;
  std::uint32_t intermediate_size = 0;
  Activation hidden_act = Activation::gelu_erf;
  double layer_norm_eps = 0;
  std::uint32_t max_position_embeddings = 0;  // rows of the position table
  // The row of the position table a sequence's first token reads. RoBERTa counts positions from its padding id
  // plus one, as its embeddings were trained with padding_idx + 1 + i.
  std::uint32_t position_offset = 0;
  std::uint32_t vocab_size = 0;
  std::uint32_t type_vocab_size = 0;  // 0: the family has no token-type embeddings
  std::uint32_t pad_token_id = 0;
  std::uint32_t num_labels = 1;     // a sequence classifier's outputs (id2label's size, or num_labels)
  std::vector<std::string> labels;  // each output's name: id2label's, else transformers' LABEL_<i>

  [[nodiscard]] std::uint32_t head_size() const noexcept { return hidden_size / num_attention_heads; }
  // Positions a sequence may take: the table's rows from position_offset on.
  [[nodiscard]] std::uint32_t positions() const noexcept {
    return max_position_embeddings > position_offset ? max_position_embeddings - position_offset : 0;
  }
};

// Tensor names as the family's base model (BertModel, RobertaModel, ...) saves them. A "stem" names a linear
// layer (stem.weight [out, in], stem.bias [out]) or a LayerNorm (stem.weight and stem.bias, or the older
// stem.gamma and stem.beta).
struct EncoderLayerNames {
  std::string query, key, value, attention_output, attention_norm, intermediate, output, output_norm;
};

struct EncoderNames {
  std::string word_embeddings, position_embeddings;  // tensors
  std::string token_type_embeddings;                 // a tensor; empty when the family has none
  std::string embeddings_norm;                       // a stem
  std::vector<EncoderLayerNames> layers;
};

// A sequence classifier (a cross-encoder reranker): the first token's state through `hidden` and `activation`,
// then `out` to num_labels scores.
struct ClassifierNames {
  std::string hidden;
  Activation activation = Activation::tanh;
  std::string out;
};

// The masked-language-model head: `transform` and `activation`, `transform_norm`, then the decoder to vocabulary
// logits. The decoder's weight is the word embeddings unless the checkpoint holds `decoder_weight` (untied).
struct MaskedLmNames {
  std::string transform;
  Activation activation = Activation::gelu_erf;
  std::string transform_norm;
  std::string decoder_weight;
  std::string decoder_bias;  // a tensor
};

struct Family {
  std::string_view name;  // "BERT"
  std::span<const std::string_view> model_types;
  // What a checkpoint of a model with a head (BertForMaskedLM, ...) puts before the base model's names.
  std::string_view base_prefix;
  Result<EncoderConfig> (*read_config)(const Fields& config);
  EncoderNames (*encoder_names)(std::uint32_t layers);
  ClassifierNames (*classifier_names)();
  MaskedLmNames (*masked_lm_names)(const EncoderConfig& config);
};

// The family of a config.json's model_type, or null.
[[nodiscard]] const Family* find_family(std::string_view model_type) noexcept;
// "bert, roberta, ...", for the refusal of any other.
[[nodiscard]] std::string supported_model_types();

// What the families share when reading config.json: model_type, architectures, id2label/num_labels.
[[nodiscard]] Result<EncoderConfig> read_common_config(const Fields& config);
// hidden_act and the like: "gelu" (exact), "gelu_new"/"gelu_pytorch_tanh" (tanh approximation), "relu", "silu".
[[nodiscard]] Result<Activation> read_activation(const Fields& config, std::string_view field);
// invalid_argument naming the field when the shapes cannot run (heads not dividing hidden_size, pad id outside).
[[nodiscard]] Status check_encoder_config(const Fields& config, const EncoderConfig& encoder,
                                          std::string_view heads_field, std::string_view hidden_field);

}  // namespace accel::embed

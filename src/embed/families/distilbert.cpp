// DistilBERT: BERT's arithmetic under other names, without token types, with LayerNorms of eps 1e-12 whatever
// the config says (transformers hard-codes it).
#include <fmt/format.h>

#include "embed/families/families.hpp"

namespace accel::embed {
namespace {

Result<EncoderConfig> read_distilbert(const Fields& fields) {
  ACCEL_ASSIGN_OR_RETURN(EncoderConfig config, read_common_config(fields));
  ACCEL_ASSIGN_OR_RETURN(config.hidden_size, fields.u32("dim", 1));
  ACCEL_ASSIGN_OR_RETURN(config.num_attention_heads, fields.u32("n_heads", 1));
  ACCEL_ASSIGN_OR_RETURN(config.num_hidden_layers, fields.u32("n_layers", 1));
  ACCEL_ASSIGN_OR_RETURN(config.intermediate_size, fields.u32("hidden_dim", 1));
  ACCEL_ASSIGN_OR_RETURN(config.max_position_embeddings, fields.u32("max_position_embeddings", 1));
  ACCEL_ASSIGN_OR_RETURN(config.vocab_size, fields.u32("vocab_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.hidden_act, read_activation(fields, "activation"));
  ACCEL_ASSIGN_OR_RETURN(config.pad_token_id, fields.u32_or("pad_token_id", 0));
  config.layer_norm_eps = 1e-12;
  config.type_vocab_size = 0;
  ACCEL_RETURN_IF_ERROR(check_encoder_config(fields, config, "n_heads", "dim"));
  return config;
}

EncoderNames distilbert_encoder_names(std::uint32_t layers) {
  EncoderNames names{.word_embeddings = "embeddings.word_embeddings.weight",
                     .position_embeddings = "embeddings.position_embeddings.weight",
                     .token_type_embeddings = "",
                     .embeddings_norm = "embeddings.LayerNorm",
                     .layers = {}};
  for (std::uint32_t i = 0; i < layers; ++i) {
    const std::string layer = fmt::format("transformer.layer.{}.", i);
    names.layers.push_back({.query = layer + "attention.q_lin",
                            .key = layer + "attention.k_lin",
                            .value = layer + "attention.v_lin",
                            .attention_output = layer + "attention.out_lin",
                            .attention_norm = layer + "sa_layer_norm",
                            .intermediate = layer + "ffn.lin1",
                            .output = layer + "ffn.lin2",
                            .output_norm = layer + "output_layer_norm"});
  }
  return names;
}

ClassifierNames distilbert_classifier() {
  return {.hidden = "pre_classifier", .activation = Activation::relu, .out = "classifier"};
}

MaskedLmNames distilbert_masked_lm(const EncoderConfig& config) {
  return {.transform = "vocab_transform",
          .activation = config.hidden_act,
          .transform_norm = "vocab_layer_norm",
          .decoder_weight = "vocab_projector.weight",
          .decoder_bias = "vocab_projector.bias"};
}

constexpr std::string_view kDistilbertTypes[] = {"distilbert"};

}  // namespace

const Family kDistilbertFamily{.name = "DistilBERT",
                               .model_types = kDistilbertTypes,
                               .base_prefix = "distilbert.",
                               .read_config = read_distilbert,
                               .encoder_names = distilbert_encoder_names,
                               .classifier_names = distilbert_classifier,
                               .masked_lm_names = distilbert_masked_lm};

}  // namespace accel::embed

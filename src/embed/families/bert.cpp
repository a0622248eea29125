// BERT and its relatives that keep its tensor names: RoBERTa, XLM-RoBERTa and CamemBERT (positions counted from
// the padding id plus one, one token type, their own classifier and masked-LM heads).
#include <fmt/format.h>

#include "embed/families/families.hpp"

namespace accel::embed {
namespace {

Result<EncoderConfig> read_bert_like(const Fields& fields) {
  ACCEL_ASSIGN_OR_RETURN(EncoderConfig config, read_common_config(fields));
  ACCEL_ASSIGN_OR_RETURN(const std::string position, fields.string_or("position_embedding_type", "absolute"));
  if (position != "absolute")
    return fields.error("position_embedding_type", fmt::format("'{}' is not supported (only 'absolute')", position));
  ACCEL_ASSIGN_OR_RETURN(config.hidden_size, fields.u32("hidden_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.num_attention_heads, fields.u32("num_attention_heads", 1));
  ACCEL_ASSIGN_OR_RETURN(config.num_hidden_layers, fields.u32("num_hidden_layers", 1));
  ACCEL_ASSIGN_OR_RETURN(config.intermediate_size, fields.u32("intermediate_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.max_position_embeddings, fields.u32("max_position_embeddings", 1));
  ACCEL_ASSIGN_OR_RETURN(config.vocab_size, fields.u32("vocab_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.type_vocab_size, fields.u32("type_vocab_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.layer_norm_eps, fields.positive("layer_norm_eps"));
  ACCEL_ASSIGN_OR_RETURN(config.hidden_act, read_activation(fields, "hidden_act"));
  // transformers' default; checkpoints written before the field existed omit it.
  ACCEL_ASSIGN_OR_RETURN(config.pad_token_id, fields.u32_or("pad_token_id", config.model_type == "bert" ? 0 : 1));
  ACCEL_RETURN_IF_ERROR(check_encoder_config(fields, config, "num_attention_heads", "hidden_size"));
  return config;
}

Result<EncoderConfig> read_bert(const Fields& fields) { return read_bert_like(fields); }

Result<EncoderConfig> read_roberta(const Fields& fields) {
  ACCEL_ASSIGN_OR_RETURN(EncoderConfig config, read_bert_like(fields));
  config.position_offset = config.pad_token_id + 1;
  if (config.position_offset >= config.max_position_embeddings)
    return fields.error("pad_token_id", fmt::format("{} leaves no position of the {} in max_position_embeddings",
                                                    config.pad_token_id, config.max_position_embeddings));
  return config;
}

EncoderNames bert_encoder_names(std::uint32_t layers) {
  EncoderNames names{.word_embeddings = "embeddings.word_embeddings.weight",
                     .position_embeddings = "embeddings.position_embeddings.weight",
                     .token_type_embeddings = "embeddings.token_type_embeddings.weight",
                     .embeddings_norm = "embeddings.LayerNorm",
                     .layers = {}};
  for (std::uint32_t i = 0; i < layers; ++i) {
    const std::string layer = fmt::format("encoder.layer.{}.", i);
    names.layers.push_back({.query = layer + "attention.self.query",
                            .key = layer + "attention.self.key",
                            .value = layer + "attention.self.value",
                            .attention_output = layer + "attention.output.dense",
                            .attention_norm = layer + "attention.output.LayerNorm",
                            .intermediate = layer + "intermediate.dense",
                            .output = layer + "output.dense",
                            .output_norm = layer + "output.LayerNorm"});
  }
  return names;
}

ClassifierNames bert_classifier() {
  return {.hidden = "pooler.dense", .activation = Activation::tanh, .out = "classifier"};
}

ClassifierNames roberta_classifier() {
  return {.hidden = "classifier.dense", .activation = Activation::tanh, .out = "classifier.out_proj"};
}

MaskedLmNames bert_masked_lm(const EncoderConfig& config) {
  return {.transform = "cls.predictions.transform.dense",
          .activation = config.hidden_act,
          .transform_norm = "cls.predictions.transform.LayerNorm",
          .decoder_weight = "cls.predictions.decoder.weight",
          .decoder_bias = "cls.predictions.bias"};
}

// RobertaLMHead applies the exact GELU whatever hidden_act says.
MaskedLmNames roberta_masked_lm(const EncoderConfig&) {
  return {.transform = "lm_head.dense",
          .activation = Activation::gelu_erf,
          .transform_norm = "lm_head.layer_norm",
          .decoder_weight = "lm_head.decoder.weight",
          .decoder_bias = "lm_head.bias"};
}

constexpr std::string_view kBertTypes[] = {"bert"};
constexpr std::string_view kRobertaTypes[] = {"roberta", "xlm-roberta", "camembert"};

}  // namespace

const Family kBertFamily{.name = "BERT",
                         .model_types = kBertTypes,
                         .base_prefix = "bert.",
                         .read_config = read_bert,
                         .encoder_names = bert_encoder_names,
                         .classifier_names = bert_classifier,
                         .masked_lm_names = bert_masked_lm};

const Family kRobertaFamily{.name = "RoBERTa",
                            .model_types = kRobertaTypes,
                            .base_prefix = "roberta.",
                            .read_config = read_roberta,
                            .encoder_names = bert_encoder_names,
                            .classifier_names = roberta_classifier,
                            .masked_lm_names = roberta_masked_lm};

}  // namespace accel::embed

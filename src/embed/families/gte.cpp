// GTE (NewModel, model_type "new"; Alibaba-NLP's gte-*-v1.5 and gte-multilingual-base, the remote code of
// Alibaba-NLP/new-impl's modeling.py): a post-norm encoder without position table, its q and k rotated (rope, halves
// rotated as GPT-NeoX does), one fused qkv_proj and a gated block down_proj(up * act(gate)) whose up and gate are the
// two halves of up_gate_proj (no bias), token-type embeddings where type_vocab_size is above 0. The base model (an
// embedding head on its last hidden states) or NewForSequenceClassification (a cross-encoder); not NewForMaskedLM.
//
// Its NTK scaling (rope_scaling {"type": "ntk", "factor": f}) multiplies every frequency of the base rope_theta * f by
// f^(-2 / head_dim), which a rotation by integer positions and one base cannot give: q and k are then rotated through
// tables (EncoderConfig::rope_scale). What the remote code can do and this family does not run is refused by name:
// mixed NTK scaling (mixed_b), absolute positions, RMSNorm, unpacked q/k/v projections, log-n attention scaling.
#include <fmt/format.h>

#include <cmath>

#include "embed/families/families.hpp"

namespace accel::embed {
namespace {

Status require_string(const Fields& fields, std::string_view field, std::string_view expected) {
  ACCEL_ASSIGN_OR_RETURN(const std::string value, fields.string_or(field, std::string(expected)));
  if (value != expected) return fields.error(field, fmt::format("'{}' is not supported (only '{}')", value, expected));
  return Status();
}

Status require_false(const Fields& fields, std::string_view field, std::string_view what) {
  if (fields.has(field) && fields.object().at(field).is_null()) return Status();
  ACCEL_ASSIGN_OR_RETURN(const bool value, fields.boolean_or(field, false));
  if (value) return fields.error(field, fmt::format("true is not supported ({})", what));
  return Status();
}

// rope_theta and rope_scaling. The remote code's NTK scaling (NTKScalingRotaryEmbedding without mixed_b) rotates
// at every position, as its cache is made for max_position_embeddings * factor from the start, by the frequencies
// (theta * factor)^(-2i / head_dim) / factor^(2 / head_dim) when factor is above 1.
Status read_rotary(const Fields& fields, EncoderConfig& config) {
  ACCEL_RETURN_IF_ERROR(require_string(fields, "position_embedding_type", "rope"));
  ACCEL_ASSIGN_OR_RETURN(config.rope_theta, fields.positive_or("rope_theta", 10000.0));
  if (!(config.rope_theta > 1.0)) return fields.error("rope_theta", "is not above 1");
  if (fields.has("rope_scaling") && !fields.object().at("rope_scaling").is_null()) {
    const nlohmann::json& scaling = fields.object().at("rope_scaling");
    if (!scaling.is_object()) return fields.error("rope_scaling", "is not an object");
    const auto type = scaling.find("type");
    if (type == scaling.end() || *type != "ntk")
      return fields.error("rope_scaling", fmt::format("{} scaling is not supported (only \"ntk\")",
                                                      type != scaling.end() ? type->dump() : "untyped"));
    if (scaling.contains("mixed_b") && !scaling.at("mixed_b").is_null())
      return fields.error("rope_scaling", "mixed_b is not supported (mixed NTK scaling)");
    const auto factor = scaling.find("factor");
    if (factor == scaling.end() || !factor->is_number() || !(factor->get<double>() > 0))
      return fields.error("rope_scaling", "has no positive factor");
    if (factor->get<double>() > 1.0) {
      config.rope_theta *= factor->get<double>();
      config.rope_scale = factor->get<double>();  // made factor^(-2 / head_dim) once the heads are known
    }
  }
  config.local_rope_theta = config.rope_theta;
  return Status();
}

Result<EncoderConfig> read_gte(const Fields& fields) {
  ACCEL_ASSIGN_OR_RETURN(EncoderConfig config, read_common_config(fields));
  config.rotary_encoder = true;
  config.post_norm = true;
  ACCEL_ASSIGN_OR_RETURN(config.hidden_size, fields.u32_or("hidden_size", 768));
  ACCEL_ASSIGN_OR_RETURN(config.num_attention_heads, fields.u32_or("num_attention_heads", 12));
  ACCEL_ASSIGN_OR_RETURN(config.num_hidden_layers, fields.u32_or("num_hidden_layers", 12));
  ACCEL_ASSIGN_OR_RETURN(config.intermediate_size, fields.u32_or("intermediate_size", 3072));
  ACCEL_ASSIGN_OR_RETURN(config.max_position_embeddings, fields.u32_or("max_position_embeddings", 2048));
  ACCEL_ASSIGN_OR_RETURN(config.vocab_size, fields.u32_or("vocab_size", 30528));
  for (const char* field : {"hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size",
                            "max_position_embeddings", "vocab_size"})
    if (fields.has(field)) ACCEL_RETURN_IF_ERROR(fields.u32(field, 1).status());
  ACCEL_ASSIGN_OR_RETURN(config.type_vocab_size, fields.u32_or("type_vocab_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.pad_token_id, fields.u32_or("pad_token_id", 0));
  ACCEL_ASSIGN_OR_RETURN(config.layer_norm_eps, fields.positive_or("layer_norm_eps", 1e-12));
  if (fields.has("hidden_act")) {
    ACCEL_ASSIGN_OR_RETURN(config.hidden_act, read_activation(fields, "hidden_act"));
  } else {
    config.hidden_act = Activation::gelu_erf;
  }
  // The remote code's fixed biases: q/k/v and the output projection have them, up_gate_proj not, down_proj has.
  config.qkv_bias = config.output_bias = true;
  config.mlp_bias = false;
  config.mlp_out_bias = true;
  ACCEL_RETURN_IF_ERROR(require_string(fields, "layer_norm_type", "layer_norm"));
  if (fields.has("pack_qkv") && !fields.object().at("pack_qkv").is_null()) {
    ACCEL_ASSIGN_OR_RETURN(const bool packed, fields.boolean_or("pack_qkv", true));
    if (!packed) return fields.error("pack_qkv", "false is not supported (only the fused qkv_proj)");
  }
  ACCEL_RETURN_IF_ERROR(require_false(fields, "logn_attention_scale", "log-n scaling of the queries"));
  ACCEL_RETURN_IF_ERROR(read_rotary(fields, config));
  config.sliding_layers.assign(config.num_hidden_layers, false);
  ACCEL_RETURN_IF_ERROR(check_encoder_config(fields, config, "num_attention_heads", "hidden_size"));
  config.head_dim = config.hidden_size / config.num_attention_heads;
  ACCEL_RETURN_IF_ERROR(check_rotary_head_dim(fields, config, "num_attention_heads"));
  if (config.rope_scale != 1.0) config.rope_scale = std::pow(config.rope_scale, -2.0 / config.head_dim);
  return config;
}

EncoderNames gte_names(std::uint32_t layers) {
  EncoderNames names{.word_embeddings = "embeddings.word_embeddings.weight",
                     .token_type_embeddings = "embeddings.token_type_embeddings.weight",
                     .embeddings_norm = "embeddings.LayerNorm"};
  for (std::uint32_t i = 0; i < layers; ++i) {
    const std::string layer = fmt::format("encoder.layer.{}.", i);
    names.rotary_layers.push_back({.attention_norm = layer + "attn_ln",
                                   .qkv = layer + "attention.qkv_proj",
                                   .attention_output = layer + "attention.o_proj",
                                   .mlp_norm = layer + "mlp_ln",
                                   .mlp_in = layer + "mlp.up_gate_proj",
                                   .mlp_out = layer + "mlp.down_proj",
                                   .gate_rows_first = true});
  }
  return names;
}

// NewForSequenceClassification (gte-multilingual-reranker-base): BERT's pooler on the first token, then the
// classifier.
ClassifierNames gte_classifier() {
  return {.hidden = "pooler.dense", .activation = Activation::tanh, .out = "classifier"};
}

constexpr std::string_view kGteTypes[] = {"new"};

}  // namespace

const Family kGteFamily{.name = "GTE",
                        .model_types = kGteTypes,
                        .base_prefix = "new.",
                        .read_config = read_gte,
                        .encoder_names = gte_names,
                        .classifier_names = gte_classifier,
                        .masked_lm_names = nullptr};

}  // namespace accel::embed

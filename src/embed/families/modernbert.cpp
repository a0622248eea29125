// ModernBERT (ModernBertModel; nomic-ai/modernbert-embed-base, Alibaba's gte-modernbert): an encoder of pre-norm
// layers without position table, its q and k rotated (rope) with one base in the global layers and another in the
// sliding-window ones; one fused Wqkv and one Wi (input and gate of a GeGLU block) per layer; LayerNorms and linear
// layers with or without biases as config.json says. Only the base model is read (an embedding head on its last
// hidden states): ModernBertForMaskedLM and ModernBertForSequenceClassification are refused.
//
// config.json as transformers 4 writes it (global_attn_every_n_layers, global_rope_theta, local_rope_theta) and as
// transformers 5 does (layer_types, rope_parameters per layer type); a local layer attends to the keys within
// local_attention / 2 positions on either side of each token (transformers' sliding-window mask, |i - j| <= w).
#include <fmt/format.h>

#include "embed/families/families.hpp"

namespace accel::embed {
namespace {

// A rope object of rope_parameters (or rope_scaling): only the default rotation; its rope_theta if it has one.
Status read_rope_object(const Fields& fields, std::string_view field, const nlohmann::json& rope, double& theta) {
  if (rope.is_null()) return Status();
  if (!rope.is_object()) return fields.error(field, "is not an object");
  const auto type = rope.find(rope.contains("rope_type") ? "rope_type" : "type");
  if (type != rope.end() && (!type->is_string() || type->get<std::string>() != "default"))
    return fields.error(field, fmt::format("rope type {} is not supported (only 'default')", type->dump()));
  const auto given = rope.find("rope_theta");
  if (given == rope.end()) return Status();
  if (!given->is_number() || !(given->get<double>() > 1.0))
    return fields.error(field, fmt::format("rope_theta {} is not a number above 1", given->dump()));
  theta = given->get<double>();
  return Status();
}

// A theta field that may be null (transformers 4's local_rope_theta: null means the global one).
Result<double> theta_or(const Fields& fields, std::string_view field, double fallback) {
  if (!fields.has(field) || fields.object().at(field).is_null()) return fallback;
  ACCEL_ASSIGN_OR_RETURN(const double theta, fields.positive(field));
  if (!(theta > 1.0)) return fields.error(field, "is not above 1");
  return theta;
}

Status read_rotary(const Fields& fields, EncoderConfig& config) {
  ACCEL_ASSIGN_OR_RETURN(config.rope_theta, theta_or(fields, "global_rope_theta", 160000.0));
  ACCEL_ASSIGN_OR_RETURN(config.local_rope_theta, theta_or(fields, "local_rope_theta", config.rope_theta));
  const nlohmann::json& document = fields.object();
  if (document.contains("rope_scaling") && !document.at("rope_scaling").is_null()) {
    double ignored = 0;
    ACCEL_RETURN_IF_ERROR(read_rope_object(fields, "rope_scaling", document.at("rope_scaling"), ignored));
  }
  if (document.contains("rope_parameters") && !document.at("rope_parameters").is_null()) {
    const nlohmann::json& rope = document.at("rope_parameters");
    if (!rope.is_object()) return fields.error("rope_parameters", "is not an object");
    for (const auto& [type, parameters] : rope.items()) {
      const std::string field = fmt::format("rope_parameters.{}", type);
      if (type == "full_attention") {
        ACCEL_RETURN_IF_ERROR(read_rope_object(fields, field, parameters, config.rope_theta));
      } else if (type == "sliding_attention") {
        ACCEL_RETURN_IF_ERROR(read_rope_object(fields, field, parameters, config.local_rope_theta));
      } else {
        return fields.error("rope_parameters",
                            fmt::format("'{}' is not a layer type (full_attention or sliding_attention)", type));
      }
    }
  }
  return Status();
}

// Which layers attend within the window: layer_types when given, else every layer but each
// global_attn_every_n_layers-th from layer 0.
Status read_layer_types(const Fields& fields, EncoderConfig& config) {
  ACCEL_ASSIGN_OR_RETURN(const std::uint32_t every, fields.u32_or("global_attn_every_n_layers", 3));
  if (every == 0) return fields.error("global_attn_every_n_layers", "is 0");
  config.sliding_layers.assign(config.num_hidden_layers, false);
  for (std::uint32_t i = 0; i < config.num_hidden_layers; ++i) config.sliding_layers[i] = i % every != 0;
  if (!fields.has("layer_types") || fields.object().at("layer_types").is_null()) return Status();
  const nlohmann::json& types = fields.object().at("layer_types");
  if (!types.is_array() || types.size() != config.num_hidden_layers)
    return fields.error("layer_types",
                        fmt::format("is not a list of num_hidden_layers ({}) layer types", config.num_hidden_layers));
  for (std::uint32_t i = 0; i < config.num_hidden_layers; ++i) {
    const nlohmann::json& type = types[i];
    if (type == "full_attention" || type == "sliding_attention") {
      config.sliding_layers[i] = type == "sliding_attention";
    } else {
      return fields.error("layer_types", fmt::format("{} is not full_attention or sliding_attention", type.dump()));
    }
  }
  return Status();
}

Result<EncoderConfig> read_modernbert(const Fields& fields) {
  ACCEL_ASSIGN_OR_RETURN(EncoderConfig config, read_common_config(fields));
  config.rotary_encoder = true;
  ACCEL_ASSIGN_OR_RETURN(config.hidden_size, fields.u32_or("hidden_size", 768));
  ACCEL_ASSIGN_OR_RETURN(config.num_attention_heads, fields.u32_or("num_attention_heads", 12));
  ACCEL_ASSIGN_OR_RETURN(config.num_hidden_layers, fields.u32_or("num_hidden_layers", 22));
  ACCEL_ASSIGN_OR_RETURN(config.intermediate_size, fields.u32_or("intermediate_size", 1152));
  ACCEL_ASSIGN_OR_RETURN(config.max_position_embeddings, fields.u32_or("max_position_embeddings", 8192));
  ACCEL_ASSIGN_OR_RETURN(config.vocab_size, fields.u32_or("vocab_size", 50368));
  ACCEL_ASSIGN_OR_RETURN(config.pad_token_id, fields.u32_or("pad_token_id", 50283));
  ACCEL_ASSIGN_OR_RETURN(config.layer_norm_eps, fields.positive_or("norm_eps", 1e-5));
  for (const char* field : {"hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size",
                            "max_position_embeddings", "vocab_size"})
    if (fields.has(field)) ACCEL_RETURN_IF_ERROR(fields.u32(field, 1).status());
  if (fields.has("hidden_activation")) {
    ACCEL_ASSIGN_OR_RETURN(config.hidden_act, read_activation(fields, "hidden_activation"));
  } else {
    config.hidden_act = Activation::gelu_erf;
  }
  ACCEL_ASSIGN_OR_RETURN(config.norm_bias, fields.boolean_or("norm_bias", false));
  ACCEL_ASSIGN_OR_RETURN(config.qkv_bias, fields.boolean_or("attention_bias", false));
  config.output_bias = config.qkv_bias;
  ACCEL_ASSIGN_OR_RETURN(config.mlp_bias, fields.boolean_or("mlp_bias", false));
  config.mlp_out_bias = config.mlp_bias;
  ACCEL_ASSIGN_OR_RETURN(const std::uint32_t local_attention, fields.u32_or("local_attention", 128));
  config.local_window = local_attention / 2;
  if (config.local_window == 0) return fields.error("local_attention", "is below 2 (a window of no key)");
  ACCEL_RETURN_IF_ERROR(read_layer_types(fields, config));
  ACCEL_RETURN_IF_ERROR(read_rotary(fields, config));
  ACCEL_RETURN_IF_ERROR(check_encoder_config(fields, config, "num_attention_heads", "hidden_size"));
  config.head_dim = config.hidden_size / config.num_attention_heads;
  ACCEL_RETURN_IF_ERROR(check_rotary_head_dim(fields, config, "num_attention_heads"));
  return config;
}

EncoderNames modernbert_names(std::uint32_t layers) {
  EncoderNames names{.word_embeddings = "embeddings.tok_embeddings.weight",
                     .embeddings_norm = "embeddings.norm",
                     .final_norm = "final_norm"};
  for (std::uint32_t i = 0; i < layers; ++i) {
    const std::string layer = fmt::format("layers.{}.", i);
    // transformers' first layer has no attention norm (an Identity).
    names.rotary_layers.push_back({.attention_norm = i == 0 ? std::string() : layer + "attn_norm",
                                   .qkv = layer + "attn.Wqkv",
                                   .attention_output = layer + "attn.Wo",
                                   .mlp_norm = layer + "mlp_norm",
                                   .mlp_in = layer + "mlp.Wi",
                                   .mlp_out = layer + "mlp.Wo"});
  }
  return names;
}

constexpr std::string_view kModernBertTypes[] = {"modernbert"};

}  // namespace

const Family kModernBertFamily{.name = "ModernBERT",
                               .model_types = kModernBertTypes,
                               .base_prefix = "model.",
                               .read_config = read_modernbert,
                               .encoder_names = modernbert_names,
                               .classifier_names = nullptr,
                               .masked_lm_names = nullptr};

}  // namespace accel::embed

// Qwen3 and Qwen2, the decoder embedders (Qwen3-Embedding, gte-Qwen2): pre-norm layers with RMSNorms, rotary
// positions, causal grouped-query attention and a SwiGLU block. Qwen3 normalises each head's queries and keys
// (q_norm, k_norm) and may set head_dim apart from hidden_size / heads; Qwen2 has biases on q, k and v. Only the
// base model is read here (an embedding head on its last hidden states): their *ForCausalLM /
// *ForSequenceClassification heads are refused.
#include <fmt/format.h>

#include "embed/families/families.hpp"

namespace accel::embed {
namespace {

// rope_theta, where transformers 4 writes it (top level) or 5 (rope_parameters); rotary scalings are refused.
Status read_rope(const Fields& fields, EncoderConfig& config) {
  const nlohmann::json& document = fields.object();
  const auto rope_type = [&](const char* field, const nlohmann::json& object) -> Status {
    if (object.is_null()) return Status();
    if (!object.is_object()) return fields.error(field, "is not an object");
    const auto type = object.find(object.contains("rope_type") ? "rope_type" : "type");
    if (type != object.end() && (!type->is_string() || type->get<std::string>() != "default"))
      return fields.error(field, fmt::format("rope type {} is not supported (only 'default')", type->dump()));
    return Status();
  };
  if (document.contains("rope_scaling")) ACCEL_RETURN_IF_ERROR(rope_type("rope_scaling", document.at("rope_scaling")));
  if (document.contains("rope_parameters") && !document.at("rope_parameters").is_null()) {
    const nlohmann::json& rope = document.at("rope_parameters");
    ACCEL_RETURN_IF_ERROR(rope_type("rope_parameters", rope));
    const auto theta = rope.find("rope_theta");
    if (theta != rope.end()) {
      if (!theta->is_number() || !(theta->get<double>() > 1.0))
        return fields.error("rope_parameters", fmt::format("rope_theta {} is not a number above 1", theta->dump()));
      config.rope_theta = theta->get<double>();
      return Status();
    }
  }
  ACCEL_ASSIGN_OR_RETURN(config.rope_theta, fields.positive_or("rope_theta", 10000.0));
  if (!(config.rope_theta > 1.0)) return fields.error("rope_theta", "is not above 1");
  return Status();
}

Result<EncoderConfig> read_qwen(const Fields& fields) {
  ACCEL_ASSIGN_OR_RETURN(EncoderConfig config, read_common_config(fields));
  config.decoder = true;
  ACCEL_ASSIGN_OR_RETURN(config.hidden_size, fields.u32("hidden_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.num_attention_heads, fields.u32("num_attention_heads", 1));
  ACCEL_ASSIGN_OR_RETURN(config.num_key_value_heads, fields.u32_or("num_key_value_heads", config.num_attention_heads));
  ACCEL_ASSIGN_OR_RETURN(config.num_hidden_layers, fields.u32("num_hidden_layers", 1));
  ACCEL_ASSIGN_OR_RETURN(config.intermediate_size, fields.u32("intermediate_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.max_position_embeddings, fields.u32("max_position_embeddings", 1));
  ACCEL_ASSIGN_OR_RETURN(config.vocab_size, fields.u32("vocab_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.layer_norm_eps, fields.positive("rms_norm_eps"));
  ACCEL_ASSIGN_OR_RETURN(config.hidden_act, read_activation(fields, "hidden_act"));
  if (config.hidden_act != Activation::silu)
    return fields.error("hidden_act", "is not supported in a Qwen gated MLP (only 'silu')");
  ACCEL_RETURN_IF_ERROR(read_rope(fields, config));
  ACCEL_ASSIGN_OR_RETURN(config.causal, fields.boolean_or("is_causal", true));
  ACCEL_ASSIGN_OR_RETURN(const bool sliding, fields.boolean_or("use_sliding_window", false));
  if (sliding) return fields.error("use_sliding_window", "true is not supported (sliding-window attention)");
  if (config.model_type == "qwen3") {
    // Qwen3Config's head_dim defaults to hidden_size / heads when absent or null.
    const bool given = fields.has("head_dim") && !fields.object().at("head_dim").is_null();
    ACCEL_ASSIGN_OR_RETURN(
        config.head_dim,
        given ? fields.u32("head_dim", 1) : Result<std::uint32_t>(config.hidden_size / config.num_attention_heads));
    ACCEL_ASSIGN_OR_RETURN(config.output_bias, fields.boolean_or("attention_bias", false));
    config.qkv_bias = config.output_bias;
    config.qk_norm = true;
  } else {
    if (config.hidden_size % config.num_attention_heads != 0)
      return fields.error("num_attention_heads", fmt::format("{} does not divide hidden_size {}",
                                                             config.num_attention_heads, config.hidden_size));
    config.head_dim = config.hidden_size / config.num_attention_heads;
    config.qkv_bias = true;
  }
  if (config.num_key_value_heads == 0 || config.num_attention_heads % config.num_key_value_heads != 0)
    return fields.error("num_key_value_heads", fmt::format("{} does not divide num_attention_heads {}",
                                                           config.num_key_value_heads, config.num_attention_heads));
  ACCEL_RETURN_IF_ERROR(
      check_rotary_head_dim(fields, config, config.model_type == "qwen3" ? "head_dim" : "num_attention_heads"));
  return config;
}

EncoderNames qwen_names(std::uint32_t layers) {
  EncoderNames names{.word_embeddings = "embed_tokens.weight", .final_norm = "norm"};
  for (std::uint32_t i = 0; i < layers; ++i) {
    const std::string layer = fmt::format("layers.{}.", i);
    names.decoder_layers.push_back({.input_norm = layer + "input_layernorm",
                                    .query = layer + "self_attn.q_proj",
                                    .key = layer + "self_attn.k_proj",
                                    .value = layer + "self_attn.v_proj",
                                    .query_norm = layer + "self_attn.q_norm",
                                    .key_norm = layer + "self_attn.k_norm",
                                    .attention_output = layer + "self_attn.o_proj",
                                    .post_attention_norm = layer + "post_attention_layernorm",
                                    .gate = layer + "mlp.gate_proj",
                                    .up = layer + "mlp.up_proj",
                                    .down = layer + "mlp.down_proj"});
  }
  return names;
}

constexpr std::string_view kQwen3Types[] = {"qwen3"};
constexpr std::string_view kQwen2Types[] = {"qwen2"};

}  // namespace

const Family kQwen3Family{.name = "Qwen3",
                          .model_types = kQwen3Types,
                          .base_prefix = "model.",
                          .read_config = read_qwen,
                          .encoder_names = qwen_names,
                          .classifier_names = nullptr,
                          .masked_lm_names = nullptr};

const Family kQwen2Family{.name = "Qwen2",
                          .model_types = kQwen2Types,
                          .base_prefix = "model.",
                          .read_config = read_qwen,
                          .encoder_names = qwen_names,
                          .classifier_names = nullptr,
                          .masked_lm_names = nullptr};

}  // namespace accel::embed

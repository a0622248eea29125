// NomicBert (NomicBertModel; nomic-embed-text-v1 and v1.5, the remote code of nomic-ai/contrastors'
// modeling_hf_nomic_bert.py): a post-norm encoder without position table, its q and k rotated (rope, every column of
// a head, halves rotated as GPT-NeoX does), one fused Wqkv and a gated block fc2(fc11(x) * act(fc12(x))) per layer
// (act silu for "swiglu", gelu for "geglu"), biases where qkv_proj_bias / mlp_fc1_bias / mlp_fc2_bias say. Its
// config.json is a GPT2Config's (n_embd, n_head, n_layer, n_inner, n_positions, layer_norm_epsilon). Only the base
// model is read (an embedding head on its last hidden states).
//
// What the remote code can do and this family does not run is refused by name: absolute positions or a partial
// rotation (rotary_emb_fraction other than 1), interleaved pairs, xPos (rotary_emb_scale_base), dynamic NTK
// (rotary_scaling_factor), pre-norm or parallel blocks, RMSNorm, causal attention, an ungated MLP.
#include <fmt/format.h>

#include "embed/families/families.hpp"

namespace accel::embed {
namespace {

// `field` must be absent, null or `expected` (what the remote code does by default, and this family runs).
Status require_bool(const Fields& fields, std::string_view field, bool expected, std::string_view what) {
  if (!fields.has(field) || fields.object().at(field).is_null()) return Status();
  ACCEL_ASSIGN_OR_RETURN(const bool value, fields.boolean_or(field, expected));
  if (value != expected) return fields.error(field, fmt::format("{} is not supported ({})", value, what));
  return Status();
}

// A field that switches a feature on when it is set to anything but null (or 0).
Status require_unset(const Fields& fields, std::string_view field, std::string_view what) {
  if (!fields.has(field)) return Status();
  const nlohmann::json& value = fields.object().at(field);
  if (value.is_null() || (value.is_number() && value.get<double>() == 0)) return Status();
  return fields.error(field, fmt::format("{} is not supported ({})", value.dump(), what));
}

Status read_rotary(const Fields& fields, EncoderConfig& config) {
  // rotary_emb_fraction 0 (the config class's default) means a position table instead of rotary positions.
  const double fraction = fields.has("rotary_emb_fraction") && fields.object().at("rotary_emb_fraction").is_number()
                              ? fields.object().at("rotary_emb_fraction").get<double>()
                              : 0.0;
  if (fraction != 1.0)
    return fields.error("rotary_emb_fraction",
                        fmt::format("{} is not supported (only 1.0: every column of a head rotated)",
                                    fields.has("rotary_emb_fraction") ? fields.object().at("rotary_emb_fraction").dump()
                                                                      : "absent (0.0, a position table)"));
  ACCEL_ASSIGN_OR_RETURN(config.rope_theta, fields.positive_or("rotary_emb_base", 10000.0));
  if (!(config.rope_theta > 1.0)) return fields.error("rotary_emb_base", "is not above 1");
  config.local_rope_theta = config.rope_theta;
  ACCEL_RETURN_IF_ERROR(require_bool(fields, "rotary_emb_interleaved", false, "pairs of even and odd columns"));
  ACCEL_RETURN_IF_ERROR(require_unset(fields, "rotary_emb_scale_base", "xPos scaling of the rotation"));
  ACCEL_RETURN_IF_ERROR(require_unset(fields, "rotary_scaling_factor", "dynamic NTK scaling of the rotary base"));
  return Status();
}

// The gated block's activation from activation_function; the ungated MLPs (gelu, gelu_new, ...) and GLU's
// sigmoid are refused.
Result<Activation> read_gated_activation(const Fields& fields) {
  ACCEL_ASSIGN_OR_RETURN(const std::string name, fields.string_or("activation_function", "gelu_new"));
  if (name == "swiglu") return Activation::silu;
  if (name == "geglu") return Activation::gelu_erf;
  return fields.error("activation_function", fmt::format("'{}' is not supported (swiglu or geglu)", name));
}

Result<EncoderConfig> read_nomic_bert(const Fields& fields) {
  ACCEL_ASSIGN_OR_RETURN(EncoderConfig config, read_common_config(fields));
  config.rotary_encoder = true;
  config.post_norm = true;
  ACCEL_ASSIGN_OR_RETURN(config.hidden_size, fields.u32_or("n_embd", 768));
  ACCEL_ASSIGN_OR_RETURN(config.num_attention_heads, fields.u32_or("n_head", 12));
  ACCEL_ASSIGN_OR_RETURN(config.num_hidden_layers, fields.u32_or("n_layer", 12));
  for (const char* field : {"n_embd", "n_head", "n_layer"})
    if (fields.has(field)) ACCEL_RETURN_IF_ERROR(fields.u32(field, 1).status());
  // The gated block's width: n_inner (or 8/3 of n_embd) rounded up to a multiple of 256, as the remote code does.
  ACCEL_ASSIGN_OR_RETURN(const std::uint32_t inner, fields.u32_or("n_inner", config.hidden_size * 8 / 3));
  if (inner == 0) return fields.error("n_inner", "is 0");
  config.intermediate_size = (inner + 255) / 256 * 256;
  // n_positions bounds the inputs (the remote code takes 2048 where it is not positive).
  ACCEL_ASSIGN_OR_RETURN(config.max_position_embeddings, fields.u32_or("n_positions", 1024));
  if (config.max_position_embeddings == 0) config.max_position_embeddings = 2048;
  // The word embeddings have vocab_size rows rounded up to pad_vocab_size_multiple.
  ACCEL_ASSIGN_OR_RETURN(const std::uint32_t vocab, fields.u32_or("vocab_size", 50257));
  ACCEL_ASSIGN_OR_RETURN(const std::uint32_t multiple, fields.u32_or("pad_vocab_size_multiple", 1));
  if (vocab == 0) return fields.error("vocab_size", "is 0");
  if (multiple == 0) return fields.error("pad_vocab_size_multiple", "is 0");
  config.vocab_size = (vocab + multiple - 1) / multiple * multiple;
  ACCEL_ASSIGN_OR_RETURN(config.type_vocab_size, fields.u32_or("type_vocab_size", 2));
  ACCEL_ASSIGN_OR_RETURN(config.pad_token_id, fields.u32_or("pad_token_id", 0));
  ACCEL_ASSIGN_OR_RETURN(config.layer_norm_eps, fields.positive_or("layer_norm_epsilon", 1e-5));
  ACCEL_ASSIGN_OR_RETURN(config.hidden_act, read_gated_activation(fields));
  ACCEL_ASSIGN_OR_RETURN(config.qkv_bias, fields.boolean_or("qkv_proj_bias", true));
  config.output_bias = config.qkv_bias;
  ACCEL_ASSIGN_OR_RETURN(config.mlp_bias, fields.boolean_or("mlp_fc1_bias", true));
  ACCEL_ASSIGN_OR_RETURN(config.mlp_out_bias, fields.boolean_or("mlp_fc2_bias", true));
  ACCEL_RETURN_IF_ERROR(require_bool(fields, "prenorm", false, "pre-norm blocks"));
  ACCEL_RETURN_IF_ERROR(require_bool(fields, "parallel_block", false, "attention and MLP in parallel"));
  ACCEL_RETURN_IF_ERROR(require_bool(fields, "use_rms_norm", false, "RMSNorm"));
  ACCEL_RETURN_IF_ERROR(require_bool(fields, "causal", false, "causal attention"));
  ACCEL_RETURN_IF_ERROR(read_rotary(fields, config));
  config.sliding_layers.assign(config.num_hidden_layers, false);
  ACCEL_RETURN_IF_ERROR(check_encoder_config(fields, config, "n_head", "n_embd"));
  config.head_dim = config.hidden_size / config.num_attention_heads;
  ACCEL_RETURN_IF_ERROR(check_rotary_head_dim(fields, config, "n_head"));
  return config;
}

EncoderNames nomic_bert_names(std::uint32_t layers) {
  EncoderNames names{.word_embeddings = "embeddings.word_embeddings.weight",
                     .token_type_embeddings = "embeddings.token_type_embeddings.weight",
                     .embeddings_norm = "emb_ln"};
  for (std::uint32_t i = 0; i < layers; ++i) {
    const std::string layer = fmt::format("encoder.layers.{}.", i);
    names.rotary_layers.push_back({.attention_norm = layer + "norm1",
                                   .qkv = layer + "attn.Wqkv",
                                   .attention_output = layer + "attn.out_proj",
                                   .mlp_norm = layer + "norm2",
                                   .mlp_in = layer + "mlp.fc12",
                                   .mlp_out = layer + "mlp.fc2",
                                   .mlp_gate = layer + "mlp.fc11"});
  }
  return names;
}

constexpr std::string_view kNomicBertTypes[] = {"nomic_bert"};

}  // namespace

const Family kNomicBertFamily{.name = "NomicBert",
                              .model_types = kNomicBertTypes,
                              .base_prefix = "bert.",
                              .read_config = read_nomic_bert,
                              .encoder_names = nomic_bert_names,
                              .classifier_names = nullptr,
                              .masked_lm_names = nullptr};

}  // namespace accel::embed

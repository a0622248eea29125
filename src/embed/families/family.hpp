// accel::embed::Family — what one model family is: how its config.json reads, and the names its checkpoints
// give the tensors of the encoder and of the heads that sit on it. Two shapes of model, each run from these names
// by one graph builder (embed/model_graph.cpp):
//   - post-norm transformer encoders (BERT and its relatives): embeddings with a position table, then layers of
//     self-attention and a feed-forward block, each followed by a LayerNorm;
//   - pre-norm decoders (Qwen2, Qwen3): token embeddings only, then layers of RMSNorm, causal grouped-query
//     attention with rotary positions (Qwen3: q/k RMSNorm per head first), RMSNorm, a SwiGLU block, each with a
//     residual around it; a final RMSNorm;
//   - pre-norm rotary encoders (ModernBERT): token embeddings and a LayerNorm, then layers of LayerNorm,
//     bidirectional attention over rotary q and k (global, or within a sliding window of each token), LayerNorm and
//     a GeGLU block, each with a residual around it; a final LayerNorm;
//   - post-norm rotary encoders (NomicBert, GTE): token embeddings (and token type 0's row) and a LayerNorm, then
//     layers of bidirectional attention over rotary q and k and a gated block, each followed by a LayerNorm of it
//     plus its residual, as BERT's; no final norm.
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

  // Decoders only (layer_norm_eps is then the RMSNorms' epsilon, and max_position_embeddings the longest input).
  bool decoder = false;
  std::uint32_t num_key_value_heads = 0;  // grouped-query attention: heads of k and v, dividing the query heads
  std::uint32_t head_dim = 0;             // each head's width (Qwen3 sets it apart from hidden_size / heads)
  double rope_theta = 0;                  // the base of the rotary frequencies
  bool qk_norm = false;                   // Qwen3: each head's q and k RMS-normalised before the rotation
  bool qkv_bias = false;                  // q, k and v projections with biases (Qwen2)
  bool output_bias = false;               // the attention's output projection with a bias
  bool causal = true;                     // false where config.json's is_causal says so (gte-Qwen2's bidirectional
                                          // attention); transformers' own Qwen classes are always causal

  // Rotary encoders only (ModernBERT, NomicBert, GTE; decoder false, layer_norm_eps the LayerNorms' epsilon,
  // rope_theta the global layers' base, qkv_bias and output_bias the attention's biases).
  bool rotary_encoder = false;
  bool post_norm = false;            // NomicBert, GTE: each block's LayerNorm after its residual add, and no final norm
  std::vector<bool> sliding_layers;  // per layer: attends within local_window of each token, rotated with
  std::uint32_t local_window = 0;    // local_rope_theta (keys j with |i - j| <= local_window)
  double local_rope_theta = 0;
  // Every rotary frequency times this (GTE's NTK scaling: factor^(-2 / head_dim) on the base rope_theta * factor);
  // 1: the rotation of the rope op. Otherwise q and k are rotated through tables of cos and sin (model_graph.cpp).
  double rope_scale = 1.0;
  bool norm_bias = true;     // the LayerNorms have biases
  bool mlp_bias = true;      // the gated block's input and gate linear layers have biases
  bool mlp_out_bias = true;  // its output linear layer has one

  [[nodiscard]] std::uint32_t head_size() const noexcept {
    return head_dim != 0 ? head_dim : hidden_size / num_attention_heads;
  }
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

// A decoder layer's stems: the norms are RMSNorms (stem.weight only), q_norm and k_norm absent (empty) but in
// Qwen3; the feed-forward block is down(silu(gate(x)) * up(x)).
struct DecoderLayerNames {
  std::string input_norm, query, key, value, query_norm, key_norm, attention_output, post_attention_norm, gate, up,
      down;
};

// A rotary encoder layer's stems: qkv one linear layer whose rows are q, k, then v; the gated block
// mlp_out(act(input(x)) * gate(x)), where mlp_in is one linear layer whose rows are the input, then the gate
// (ModernBERT's Wi), or the gate, then the input where gate_rows_first (GTE's up_gate_proj), or, where mlp_gate is
// set, the input alone and mlp_gate the gate (NomicBert's fc12 and fc11). Pre-norm (ModernBERT): attention_norm
// before the attention, empty where the layer has none (the first), mlp_norm before the gated block. Post-norm
// (EncoderConfig::post_norm): attention_norm after the attention's residual add, mlp_norm after the block's.
struct RotaryEncoderLayerNames {
  std::string attention_norm, qkv, attention_output, mlp_norm, mlp_in, mlp_out;
  std::string mlp_gate;
  bool gate_rows_first = false;
};

struct EncoderNames {
  std::string word_embeddings, position_embeddings;    // tensors; a decoder has no position table (empty)
  std::string token_type_embeddings;                   // a tensor; empty when the family has none
  std::string embeddings_norm;                         // a stem; empty for a decoder
  std::vector<EncoderLayerNames> layers;               // an encoder's
  std::vector<DecoderLayerNames> decoder_layers;       // a decoder's
  std::vector<RotaryEncoderLayerNames> rotary_layers;  // a rotary encoder's
  std::string final_norm;  // a decoder's last RMSNorm, a pre-norm rotary encoder's last LayerNorm (a stem)
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
  ClassifierNames (*classifier_names)();                          // null: the family has no classifier head here
  MaskedLmNames (*masked_lm_names)(const EncoderConfig& config);  // null: nor a masked-LM head
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
// invalid_argument naming `heads_field` when the heads' width (config.head_dim) is one rotary attention cannot run:
// odd, or over 128 columns.
[[nodiscard]] Status check_rotary_head_dim(const Fields& config, const EncoderConfig& encoder,
                                           std::string_view heads_field);

}  // namespace accel::embed

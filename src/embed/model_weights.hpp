// accel::embed::ModelWeights — every parameter a model folder's graph reads, with where it comes from (a tensor
// of the transformer's or a Dense module's model.safetensors, from which row), each found and checked (name,
// shape, float dtype) before anything is converted, so that a wrong or damaged checkpoint is refused with every
// missing or misshaped tensor named.
//
// Parameters are named as the family's base model names its tensors, without the prefix a model with a head
// puts before them ("bert.", "roberta.", ...; either form is accepted), LayerNorms as .weight/.bias even where
// the checkpoint says .gamma/.beta. Linear weights are [out, in], as PyTorch keeps them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/graph/gate_layout.hpp"
#include "embed/model_folder.hpp"
#include "embed/safetensors_file.hpp"

namespace accel::embed {

struct Parameter {
  std::string name;
  std::vector<std::uint64_t> shape;  // as the graph declares it
};

struct LinearParameters {
  Parameter weight;               // [out, in]
  std::optional<Parameter> bias;  // [out]
};

struct NormParameters {
  Parameter gamma;
  std::optional<Parameter> beta;  // absent for a LayerNorm without bias (ModernBERT's norm_bias false)
};

struct EncoderLayerParameters {
  LinearParameters query, key, value, attention_output;
  // q, k and v as one projection (their weights' rows stacked, and their biases), which attention_packed reads.
  std::optional<LinearParameters> qkv;
  NormParameters attention_norm;
  LinearParameters intermediate, output;
  NormParameters output_norm;
};

// A decoder layer (Qwen2, Qwen3): RMSNorm gammas, q/k norms over a head's width (Qwen3), SwiGLU projections.
struct DecoderLayerParameters {
  Parameter input_norm;  // [hidden]
  LinearParameters query, key, value;
  // q, k and v as one projection, as EncoderLayerParameters::qkv, which one rope and attention_packed read.
  std::optional<LinearParameters> qkv;
  std::optional<Parameter> query_norm, key_norm;  // [head_dim]
  LinearParameters attention_output;
  Parameter post_attention_norm;  // [hidden]
  LinearParameters gate, up, down;
  std::optional<LinearParameters> gate_up;  // gate and up as one projection, which GraphBuilder::gated splits
  graph::GateLayout gate_up_layout = graph::GateLayout::halves;  // how gate_up's rows are laid out
};

// A rotary encoder layer (ModernBERT, NomicBert, GTE): q, k and v are row ranges of the fused qkv projection; the
// gated block output(act(input(x)) * gate(x)), input and gate row ranges of one linear layer or two layers. The norms
// come before their blocks (pre-norm) or after their residual adds (EncoderConfig::post_norm).
struct RotaryEncoderLayerParameters {
  std::optional<NormParameters> attention_norm;  // absent in a pre-norm encoder's first layer
  LinearParameters query, key, value, attention_output;
  // Where the rotation goes through tables (EncoderConfig::rope_scale): q and k with the halves of each head swapped
  // (stacked parameters of their row ranges), which times the sine table is rotate_half's term.
  std::optional<LinearParameters> query_swapped, key_swapped;
  std::optional<LinearParameters> qkv;  // q, k and v as one projection, as EncoderLayerParameters::qkv
  NormParameters mlp_norm;
  LinearParameters input, gate, output;
  std::optional<LinearParameters> input_gate;  // input and gate as one projection, which GraphBuilder::gated splits
  graph::GateLayout input_gate_layout = graph::GateLayout::halves;  // how input_gate's rows are laid out
};

struct ModelParameters {
  Parameter word_embeddings;
  Parameter position_embeddings;  // the rows a sequence of max_sequence_length tokens reads, from position_offset
  // Head::classifier: the whole table, indexed by the pair's type ids; otherwise the row of type 0 ([hidden]),
  // as every token of a single text has type 0. Absent for families without token types.
  std::optional<Parameter> token_types;
  NormParameters embeddings_norm;
  std::vector<EncoderLayerParameters> layers;
  std::vector<DecoderLayerParameters> decoder_layers;       // a decoder's layers (then the fields above but the word
  std::optional<Parameter> final_norm;                      // embeddings are empty), and its last RMSNorm's gamma
  std::vector<RotaryEncoderLayerParameters> rotary_layers;  // a rotary encoder's (with embeddings_norm)
  std::optional<NormParameters> final_layer_norm;           // a pre-norm rotary encoder's last LayerNorm
  // The rotation's tables [max sequence length, hidden] where it goes through them (EncoderConfig::rope_scale).
  std::optional<Parameter> rotary_cos, rotary_sin;

  std::vector<LinearParameters> dense;                // Head::embedding: the Dense modules, in order
  std::optional<LinearParameters> classifier_hidden;  // Head::classifier, but a yes/no reranker's
  std::optional<LinearParameters> classifier_out;     // Head::classifier (a yes/no reranker's: [1, hidden], no bias)
  Activation classifier_hidden_activation = Activation::tanh;
  std::optional<LinearParameters> masked_lm_transform;  // Head::splade
  std::optional<NormParameters> masked_lm_norm;         // Head::splade
  Activation masked_lm_activation = Activation::gelu_erf;
  std::optional<Parameter> decoder_weight;  // Head::splade, when not tied to the word embeddings
  std::optional<Parameter> decoder_bias;    // Head::splade
};

// Where a parameter's values come from: rows [first_row, first_row + the parameter's rows) of a tensor, less as many
// rows from minus_row when it is set (a yes/no reranker's lm_head[yes] - lm_head[no], taken in f32 before the
// compute dtype rounds it).
struct ParameterSource {
  std::size_t file = 0;  // ModelWeights::files
  std::string tensor;
  std::uint64_t first_row = 0;
  std::optional<std::uint64_t> minus_row;
  // Values computed rather than read (no tensor): a rotary table [positions, heads * head_dim] whose row p, column
  // h * head_dim + j holds cos(p w_i), or for `sine` sin(p w_i) negated in a head's first half, i = j mod
  // (head_dim / 2) and w_i = scale * theta^(-2i / head_dim).
  struct RotaryTable {
    double theta = 0, scale = 1;
    std::uint32_t head_dim = 0, width = 0;  // width: the columns of a row, heads * head_dim
    bool sine = false;
  };
  std::optional<RotaryTable> rotary;
};

struct ModelWeights {
  std::vector<SafetensorsFile> files;  // the transformer's, then each Dense module's
  ModelParameters parameters;
  std::map<std::string, ParameterSource, std::less<>> sources;  // by parameter name
  // A parameter made of other parameters' rows (EncoderLayerParameters::qkv), instead of a source: each part whole,
  // in order, or with rows_per_turn > 0 (parts of as many rows) the parts taking turns, that many rows each.
  struct Stacked {
    std::vector<Parameter> parts;
    std::uint64_t rows_per_turn = 0;
  };
  std::map<std::string, Stacked, std::less<>> stacked;

  // Opens the folder's weight files and finds every parameter its head reads. invalid_argument names the file
  // and every tensor missing, misshaped or not of a float type (the first few of them).
  static Result<ModelWeights> open(const ModelFolder& folder);
};

}  // namespace accel::embed

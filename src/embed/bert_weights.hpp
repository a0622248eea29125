// accel::embed::BertWeights — the tensors a BERT encoder reads from its checkpoint, by name and expected shape,
// and the check of a SafetensorsFile against them, so that a wrong or damaged checkpoint is refused with every
// missing or misshaped tensor named before anything is copied to a device.
//
// Names follow transformers' BertModel ("embeddings.word_embeddings.weight", "encoder.layer.3.output.dense.bias",
// ...). Checkpoints saved from a model with a head (BertForMaskedLM and the like) put "bert." before each of
// them; either is accepted, and `prefix` says which the file uses. Linear weights are [out, in], as PyTorch
// keeps them. Tensors the encoder does not read (the pooler, position_ids) may be present or not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "accel/core/result.hpp"
#include "embed/model_folder.hpp"
#include "embed/safetensors_file.hpp"

namespace accel::embed {

struct WeightSpec {
  std::string name;  // prefix included
  std::vector<std::uint64_t> shape;
};

// A linear layer (y = x·weightᵀ + bias) or a LayerNorm (weight = gamma, bias = beta).
struct WeightPair {
  WeightSpec weight;
  WeightSpec bias;
};

struct BertLayerWeights {
  WeightPair query;
  WeightPair key;
  WeightPair value;
  WeightPair attention_output;
  WeightPair attention_norm;
  WeightPair intermediate;
  WeightPair output;
  WeightPair output_norm;
};

struct BertWeights {
  std::string prefix;  // "" or "bert."
  WeightSpec word_embeddings;
  WeightSpec position_embeddings;
  WeightSpec token_type_embeddings;
  WeightPair embeddings_norm;
  std::vector<BertLayerWeights> layers;

  // The names and shapes `config` implies, under `prefix`.
  [[nodiscard]] static BertWeights expected(const BertConfig& config, const std::string& prefix);

  // The expected weights under the prefix the file uses, once every one of them is found with its shape and a
  // float dtype. invalid_argument names the file and the tensors that are missing, misshaped or not floats.
  [[nodiscard]] static Result<BertWeights> validate(const SafetensorsFile& file, const BertConfig& config);

  // Every spec, embeddings first, then the layers in order: pointers into this object, valid while it lives.
  [[nodiscard]] std::vector<const WeightSpec*> all() const;
};

}  // namespace accel::embed

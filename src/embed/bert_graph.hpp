// A BERT encoder with mean pooling (and L2 normalisation) as one compiled graph over packed sequences:
//
//   inputs   ids i32 [tokens], offsets i32 [sequences + 1] (padding sequences empty)
//   output   embeddings f32 [sequences, hidden]
//
// Parameters carry the checkpoint's names (without its "bert." prefix) and are stored in the compute dtype, so a
// weights buffer made by bert_weight_bytes is the model's only copy on the device whatever the number of
// compiled buckets. Both symbols are bucketed: tokens on a power-of-two ladder up to the run's token budget,
// sequences likewise (a sequence has at least one token).
#pragma once

#include <memory>
#include <vector>

#include "accel/graph/graph.hpp"
#include "embed/bert_weights.hpp"
#include "embed/model_folder.hpp"
#include "embed/safetensors_file.hpp"

namespace accel::embed {

struct BertGraphOptions {
  DType compute = DType::f32;         // f32, f16 or bf16
  std::int64_t batch_tokens = 16384;  // the top of the tokens ladder
  std::int64_t min_bucket = 64;       // the bottom of it
};

[[nodiscard]] Result<std::shared_ptr<const graph::Graph>> bert_graph(const ModelFolder& folder,
                                                                     const BertGraphOptions& options);

// The weights buffer of `graph`: each parameter's checkpoint tensor converted to the parameter's dtype, at its
// offset.
[[nodiscard]] Result<std::vector<std::uint8_t>> bert_weight_bytes(const graph::Graph& graph,
                                                                  const SafetensorsFile& file,
                                                                  const BertWeights& weights);

}  // namespace accel::embed

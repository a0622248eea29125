// A model folder's encoder and head as one compiled graph over packed sequences:
//
//   inputs   ids i32 [tokens], offsets i32 [sequences + 1] (padding sequences empty),
//            and for Head::classifier on a family with token types, types i32 [tokens]
//   output   output f32 [sequences, ModelFolder::output_dimensions()]
//
// The token-vectors graph (token_vectors_graph) has the same inputs and, as output, the encoder's last hidden
// states before any head, f32 [tokens, hidden]; its parameters are the first ones of the model's graph, at the same
// offsets, so it runs on the model's weights buffer.
//
// Parameters are ModelWeights' and are stored in the compute dtype, so a weights buffer made by
// model_weight_bytes is the model's only copy on the device whatever the number of compiled buckets. Both
// symbols are bucketed: tokens on a power-of-two ladder up to the run's token budget, sequences likewise.
#pragma once

#include <memory>
#include <vector>

#include "accel/graph/graph.hpp"
#include "embed/model_folder.hpp"
#include "embed/model_weights.hpp"

namespace accel::embed {

// The bottom of the tokens ladder. A short query (a handful of tokens) runs at this rung on a device that replays, so
// every row a query's kernels compute past its last token is work on its latency path.
inline constexpr std::int64_t kSmallestBucket = 16;

struct ModelGraphOptions {
  DType compute = DType::f32;         // f32, f16 or bf16
  std::int64_t batch_tokens = 16384;  // the top of the tokens ladder
};

[[nodiscard]] Result<std::shared_ptr<const graph::Graph>> model_graph(const ModelFolder& folder,
                                                                      const ModelWeights& weights,
                                                                      const ModelGraphOptions& options);

// The encoder alone, its output one row per token (see the top of the file). internal error when its parameters do
// not lie where `model`'s are (the weights buffer is `model`'s).
[[nodiscard]] Result<std::shared_ptr<const graph::Graph>> token_vectors_graph(const ModelFolder& folder,
                                                                              const ModelWeights& weights,
                                                                              const ModelGraphOptions& options,
                                                                              const graph::Graph& model);

// Whether the graph of `folder` takes the "types" input.
[[nodiscard]] bool takes_token_types(const ModelFolder& folder) noexcept;

// The weights buffer of `graph`: each parameter's source rows converted to the parameter's dtype, at its offset.
[[nodiscard]] Result<std::vector<std::uint8_t>> model_weight_bytes(const graph::Graph& graph,
                                                                   const ModelWeights& weights);

}  // namespace accel::embed

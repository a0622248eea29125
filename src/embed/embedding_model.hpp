// The implementation of accel::embed::Model behind its public header: made by model_loading.cpp once the folder
// is read, the weights converted and uploaded.
#pragma once

#include <memory>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "accel/graph/graph.hpp"
#include "accel/text/tokenizer.hpp"
#include "embed/model_folder.hpp"

namespace accel::embed {

// The model's two graphs over one weights buffer (model_graph.hpp).
struct ModelGraphs {
  std::shared_ptr<const graph::Graph> model;          // encoder and head: one row per sequence
  std::shared_ptr<const graph::Graph> token_vectors;  // the encoder alone: one row per token
};

// The model, warmed: its smallest bucket, or every batch size with ModelOptions::warm_every_batch_size.
[[nodiscard]] Result<std::shared_ptr<Model>> make_model(Device device, ModelFolder folder, text::Tokenizer tokenizer,
                                                        ModelGraphs graphs, Buffer<std::uint8_t> weights,
                                                        ModelInfo info, ModelOptions options, bool replays);

}  // namespace accel::embed

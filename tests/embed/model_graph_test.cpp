// model_graph on the committed tiny models of every family and head: where the head reads one row a sequence (CLS or
// last-token pooling, every classifier), the last layer's MLP runs on those rows only ([sequences, hidden]); where it
// reads every token (mean, max, weighted pooling, SPLADE) and in the token-vectors graph, on every token. That the
// rows are the right ones is families_test's (every family against transformers).
#include "embed/model_graph.hpp"

#include <gtest/gtest.h>

#include <string>

namespace accel::embed {
namespace {

const std::filesystem::path kFamilies = std::filesystem::path(ACCEL_TEST_DATA) / "families";

// The name of the weight of the last layer's MLP output projection.
std::string last_mlp_output(const ModelParameters& p) {
  if (!p.decoder_layers.empty()) return p.decoder_layers.back().down.weight.name;
  if (!p.rotary_layers.empty()) return p.rotary_layers.back().output.weight.name;
  return p.layers.back().output.weight.name;
}

// The symbol of the rows of the matmul that reads parameter `weight` (empty when no matmul reads it).
std::string rows_of_matmul_reading(const graph::Graph& graph, const std::string& weight) {
  for (const graph::Node& node : graph.nodes()) {
    if (node.kind != graph::OpKind::matmul || node.inputs.size() < 2) continue;
    if (graph.tensors()[node.inputs[1]].name != weight) continue;
    return graph.tensors()[node.output].shape.at(0).symbol;
  }
  return {};
}

struct Built {
  ModelWeights weights;
  std::shared_ptr<const graph::Graph> model;
  std::shared_ptr<const graph::Graph> token_vectors;
};

Built build(const std::string& name) {
  Result<ModelFolder> folder = ModelFolder::read(kFamilies / name);
  EXPECT_TRUE(folder.ok()) << name << ": " << folder.status().to_string();
  Result<ModelWeights> weights = ModelWeights::open(*folder);
  EXPECT_TRUE(weights.ok()) << name << ": " << weights.status().to_string();
  const ModelGraphOptions options{.compute = DType::f32, .batch_tokens = 512};
  Result<std::shared_ptr<const graph::Graph>> model = model_graph(*folder, *weights, options);
  EXPECT_TRUE(model.ok()) << name << ": " << model.status().to_string();
  Result<std::shared_ptr<const graph::Graph>> vectors = token_vectors_graph(*folder, *weights, options, **model);
  EXPECT_TRUE(vectors.ok()) << name << ": " << vectors.status().to_string();
  return {std::move(*weights), *model, *vectors};
}

TEST(ModelGraphTest, TheLastLayerComputesOnlyTheRowsAHeadOfOneRowASequenceReads) {
  for (const std::string name :
       {"bert_cls_old_format", "distilbert_lasttoken", "bert_reranker", "roberta_reranker", "gte_ntk_cls",
        "gte_reranker", "modernbert_bias_cls", "nomic_bias_geglu_cls", "qwen2_lasttoken", "qwen3_lasttoken_prompts"}) {
    SCOPED_TRACE(name);
    const Built built = build(name);
    ASSERT_TRUE(built.model && built.token_vectors);
    const std::string weight = last_mlp_output(built.weights.parameters);
    EXPECT_EQ(rows_of_matmul_reading(*built.model, weight), "sequences");
    EXPECT_EQ(rows_of_matmul_reading(*built.token_vectors, weight), "tokens");
    // Every layer before the last runs on every token.
    const ModelParameters& p = built.weights.parameters;
    const std::string first = !p.decoder_layers.empty()  ? p.decoder_layers.front().down.weight.name
                              : !p.rotary_layers.empty() ? p.rotary_layers.front().output.weight.name
                                                         : p.layers.front().output.weight.name;
    if (first != weight) {
      EXPECT_EQ(rows_of_matmul_reading(*built.model, first), "tokens");
    }
  }
}

TEST(ModelGraphTest, HeadsReadingEveryTokenKeepEveryRowOfTheLastLayer) {
  for (const std::string name : {"bert_mean_dense_norm", "roberta_max_norm", "xlmr_weightedmean_prompts",
                                 "bert_sqrt_len", "distilbert_splade", "modernbert_mean_norm", "nomic_mean_norm"}) {
    SCOPED_TRACE(name);
    const Built built = build(name);
    ASSERT_TRUE(built.model);
    EXPECT_EQ(rows_of_matmul_reading(*built.model, last_mlp_output(built.weights.parameters)), "tokens");
  }
}

}  // namespace
}  // namespace accel::embed

// ModelWeights::open on the committed tiny models of every family and head, and on copies of one whose checkpoint
// the test rewrites with a tensor missing, misshaped or of an integer type: each refused naming the file and the
// tensor. And a tokenizer whose vocabulary does not fit the embedding matrix, refused by Model::load.
#include "embed/model_weights.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "embed/safetensors_writer.hpp"
#include "testing/model_folder.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::embed {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kFamilies = std::filesystem::path(ACCEL_TEST_DATA) / "families";

TEST(ModelWeightsRealTest, AllMiniLmL6V2HasEveryTensorTheEncoderReads) {
  const std::filesystem::path folder = accel::testing::model_folder(ACCEL_TEST_MODEL_FOLDER);
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(folder);
  const Result<ModelFolder> model = ModelFolder::read(folder);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Result<ModelWeights> weights = ModelWeights::open(*model);
  ASSERT_TRUE(weights.ok()) << weights.status().to_string();
  EXPECT_EQ(weights->parameters.layers.size(), 6u);
  EXPECT_EQ(weights->parameters.word_embeddings.shape, (std::vector<std::uint64_t>{30522, 384}));
  // Every tensor the graph reads, at its size: a damaged file is refused here rather than read short.
  for (const auto& [parameter, source] : weights->sources) {
    const Result<TensorView> view = weights->files[source.file].tensor(source.tensor);
    ASSERT_TRUE(view.ok()) << parameter << ": " << view.status().to_string();
  }
}

TEST(ModelWeightsTest, FindsEveryParameterOfEveryTinyModel) {
  for (const std::string name :
       {"bert_mean_dense_norm", "bert_cls_old_format", "roberta_max_norm", "xlmr_weightedmean_prompts",
        "distilbert_lasttoken", "bert_reranker", "roberta_reranker", "distilbert_splade"}) {
    const Result<ModelFolder> folder = ModelFolder::read(kFamilies / name);
    ASSERT_TRUE(folder.ok()) << folder.status().to_string();
    const Result<ModelWeights> weights = ModelWeights::open(*folder);
    ASSERT_TRUE(weights.ok()) << name << ": " << weights.status().to_string();
    EXPECT_EQ(weights->parameters.layers.size(), 2u) << name;
    EXPECT_EQ(weights->files.size(), 1 + folder->dense.size()) << name;
    for (const auto& [parameter, source] : weights->sources)
      EXPECT_TRUE(weights->files[source.file].contains(source.tensor)) << name << ": " << parameter;
  }
}

TEST(ModelWeightsTest, TakesThePositionsFromTheFamilysOffsetAndOneTypeRowForSingleTexts) {
  const Result<ModelFolder> folder = ModelFolder::read(kFamilies / "roberta_max_norm");
  ASSERT_TRUE(folder.ok());
  const Result<ModelWeights> weights = ModelWeights::open(*folder);
  ASSERT_TRUE(weights.ok()) << weights.status().to_string();
  const ModelParameters& p = weights->parameters;
  EXPECT_EQ(weights->sources.at(p.position_embeddings.name).first_row, folder->config.pad_token_id + 1);
  EXPECT_EQ(p.position_embeddings.shape, (std::vector<std::uint64_t>{48, 32}));
  ASSERT_TRUE(p.token_types.has_value());
  EXPECT_EQ(p.token_types->shape, (std::vector<std::uint64_t>{32}));
  const Result<ModelFolder> reranker = ModelFolder::read(kFamilies / "bert_reranker");
  ASSERT_TRUE(reranker.ok());
  const Result<ModelWeights> pairs = ModelWeights::open(*reranker);
  ASSERT_TRUE(pairs.ok());
  EXPECT_EQ(pairs->parameters.token_types->shape, (std::vector<std::uint64_t>{2, 32}));
}

// A gated block's two projections become one parameter whose rows take turns 8 at a time (GateLayout::groups_of_8,
// which a GPU fuses with the gate); families_test checks the outputs against transformers.
TEST(ModelWeightsTest, StacksAGatedBlocksProjectionsInTurnsOfEightRows) {
  for (const std::string name : {"qwen3_lasttoken_prompts", "nomic_bias_geglu_cls", "modernbert_mean_norm"}) {
    const Result<ModelFolder> folder = ModelFolder::read(kFamilies / name);
    ASSERT_TRUE(folder.ok()) << folder.status().to_string();
    const Result<ModelWeights> weights = ModelWeights::open(*folder);
    ASSERT_TRUE(weights.ok()) << name << ": " << weights.status().to_string();
    const ModelParameters& p = weights->parameters;
    const bool decoder = !p.decoder_layers.empty();
    const std::optional<LinearParameters>& stacked =
        decoder ? p.decoder_layers[0].gate_up : p.rotary_layers[0].input_gate;
    ASSERT_TRUE(stacked.has_value()) << name;
    EXPECT_EQ(decoder ? p.decoder_layers[0].gate_up_layout : p.rotary_layers[0].input_gate_layout,
              graph::GateLayout::groups_of_8)
        << name;
    const ModelWeights::Stacked& parts = weights->stacked.at(stacked->weight.name);
    EXPECT_EQ(parts.rows_per_turn, 8u) << name;
    ASSERT_EQ(parts.parts.size(), 2u) << name;
    EXPECT_EQ(stacked->weight.shape[0], 2 * parts.parts[0].shape[0]) << name;
    if (stacked->bias) {
      EXPECT_EQ(weights->stacked.at(stacked->bias->name).rows_per_turn, 8u) << name;
    }
  }
}

class DamagedWeightsTest : public ::testing::Test {
 protected:
  // bert_reranker copied, its model.safetensors rewritten (zero-filled) with `change` applied to its tensor list.
  Result<ModelWeights> open_changed(const std::function<void(std::vector<testing::WrittenTensor>&)>& change) {
    std::filesystem::copy(kFamilies / "bert_reranker", dir_.path(),
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
    const Result<SafetensorsFile> file = SafetensorsFile::open(kFamilies / "bert_reranker" / "model.safetensors");
    EXPECT_TRUE(file.ok());
    std::vector<testing::WrittenTensor> tensors;
    for (std::string_view name : file->names()) {
      const TensorView view = *file->tensor(name);
      tensors.push_back({std::string(name), "F32", {view.shape.begin(), view.shape.end()}});
    }
    change(tensors);
    std::ofstream(dir_.path() / "model.safetensors", std::ios::binary) << testing::safetensors_bytes(tensors);
    const Result<ModelFolder> folder = ModelFolder::read(dir_.path());
    EXPECT_TRUE(folder.ok()) << folder.status().to_string();
    return ModelWeights::open(*folder);
  }
  void expect_refused(const Result<ModelWeights>& weights, const std::string& what) {
    ASSERT_FALSE(weights.ok());
    EXPECT_EQ(weights.code(), Code::invalid_argument);
    EXPECT_THAT(weights.status().message(), HasSubstr((dir_.path() / "model.safetensors").native()));
    EXPECT_THAT(weights.status().message(), HasSubstr(what));
  }
  static testing::WrittenTensor& find(std::vector<testing::WrittenTensor>& tensors, const std::string& suffix) {
    for (auto& t : tensors)
      if (t.name.ends_with(suffix)) return t;
    throw std::runtime_error(suffix);
  }

  accel::testing::ScratchDirectory dir_{"model_weights_test"};
};

TEST_F(DamagedWeightsTest, NamesAMissingTensor) {
  expect_refused(open_changed([](auto& tensors) {
                   std::erase_if(tensors, [](const auto& t) { return t.name.ends_with("layer.1.output.dense.bias"); });
                 }),
                 "'encoder.layer.1.output.dense.bias' is missing");
  expect_refused(open_changed([](auto& tensors) {
                   std::erase_if(tensors, [](const auto& t) { return t.name.starts_with("classifier."); });
                 }),
                 "'classifier.weight' is missing");
}

TEST_F(DamagedWeightsTest, NamesAMisshapedOrIntegerTensor) {
  expect_refused(open_changed([](auto& tensors) {
                   find(tensors, "layer.0.attention.self.key.weight").shape = {32, 16};
                 }),
                 "is [32, 16], not [32, 32]");
  expect_refused(open_changed([](auto& tensors) { find(tensors, "embeddings.LayerNorm.weight").dtype = "I32"; }),
                 "is I32, not a float type");
  expect_refused(open_changed([](auto& tensors) { find(tensors, "word_embeddings.weight").shape[0] -= 1; }),
                 "word_embeddings.weight' is [");
}

TEST(ModelLoadTest, RefusesATokenizerLargerThanTheEmbeddingMatrix) {
  accel::testing::ScratchDirectory dir{"model_weights_tokenizer_test"};
  std::filesystem::copy(kFamilies / "bert_reranker", dir.path(), std::filesystem::copy_options::recursive);
  std::filesystem::copy_file(kFamilies / "xlmr_weightedmean_prompts" / "tokenizer.json", dir.path() / "tokenizer.json",
                             std::filesystem::copy_options::overwrite_existing);
  System system;
  const Device device = *Device::open(system, {.kind = DeviceKind::cpu});
  const Result<std::shared_ptr<Model>> model = Model::load(device, {.folder = dir.path()});
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr((dir.path() / "tokenizer.json").native()));
  EXPECT_THAT(model.status().message(), HasSubstr("do not fit the embedding matrix of 2000 rows"));
}

}  // namespace
}  // namespace accel::embed

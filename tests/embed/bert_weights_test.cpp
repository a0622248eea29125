// BertWeights::validate on the real all-MiniLM-L6-v2 checkpoint, and on small checkpoints the tests write with
// and without the "bert." prefix, with tensors missing, misshaped or of an integer dtype.
#include "embed/bert_weights.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "embed/safetensors_writer.hpp"
#include "testing/model_folder.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::embed {
namespace {

using ::testing::HasSubstr;
using testing::WrittenTensor;

const std::filesystem::path kModelFolder = testing::model_folder(ACCEL_TEST_MODEL_FOLDER);

TEST(BertWeightsRealTest, AllMiniLmL6V2HasEveryTensorTheEncoderReads) {
  ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kModelFolder);
  const Result<ModelFolder> folder = ModelFolder::read(kModelFolder);
  ASSERT_TRUE(folder.ok()) << folder.status().to_string();
  const Result<SafetensorsFile> file = SafetensorsFile::open(folder->weights);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const Result<BertWeights> weights = BertWeights::validate(*file, folder->config);
  ASSERT_TRUE(weights.ok()) << weights.status().to_string();

  EXPECT_EQ(weights->prefix, "");
  ASSERT_EQ(weights->layers.size(), 6u);
  EXPECT_EQ(weights->all().size(), 5u + 6u * 16u);
  // The encoder's 101 tensors, the pooler's two and position_ids.
  EXPECT_EQ(file->names().size(), 104u);
  EXPECT_EQ(file->tensor("embeddings.position_ids")->dtype, StoredDType::i64);
  EXPECT_EQ(weights->layers[5].output.weight.name, "encoder.layer.5.output.dense.weight");
  EXPECT_THAT(weights->layers[5].output.weight.shape, ::testing::ElementsAre(384, 1536));

  // Every weight converts to the compute dtypes: none is out of f16's range.
  for (const WeightSpec* spec : weights->all()) {
    const Result<std::vector<float>> values = file->to_f32(spec->name);
    ASSERT_TRUE(values.ok()) << values.status().to_string();
    const Result<std::vector<std::uint16_t>> half = file->to_16bit(spec->name, DType::f16);
    ASSERT_TRUE(half.ok()) << half.status().to_string();
    ASSERT_EQ(half->size(), values->size());
  }
  const std::vector<float> gamma = *file->to_f32("embeddings.LayerNorm.weight");
  EXPECT_GT(gamma[0], 0.0f);  // a trained LayerNorm scale, not a zeroed or shifted read
  EXPECT_LT(gamma[0], 10.0f);
}

// Two layers, hidden 4 in 2 heads, intermediate 8, 10 words, 6 positions, 2 token types.
BertConfig tiny_config() {
  return {.hidden_size = 4,
          .num_attention_heads = 2,
          .num_hidden_layers = 2,
          .intermediate_size = 8,
          .hidden_act = Gelu::erf,
          .layer_norm_eps = 1e-12,
          .max_position_embeddings = 6,
          .vocab_size = 10,
          .type_vocab_size = 2,
          .pad_token_id = 0};
}

std::vector<WrittenTensor> tiny_tensors(const std::string& prefix) {
  std::vector<WrittenTensor> tensors;
  const BertWeights weights = BertWeights::expected(tiny_config(), prefix);
  for (const WeightSpec* spec : weights.all()) tensors.push_back({spec->name, "F32", spec->shape});
  tensors.push_back({prefix + "embeddings.position_ids", "I64", {1, 6}});
  return tensors;
}

class BertWeightsTest : public ::testing::Test {
 protected:
  Result<BertWeights> validate(const std::vector<WrittenTensor>& tensors) {
    const std::filesystem::path path = dir_.path() / ("model" + std::to_string(files_++) + ".safetensors");
    std::ofstream(path, std::ios::binary) << testing::safetensors_bytes(tensors);
    Result<SafetensorsFile> file = SafetensorsFile::open(path);
    if (!file.ok()) return file.status();
    return BertWeights::validate(*file, tiny_config());
  }

  static std::vector<WrittenTensor> without(std::vector<WrittenTensor> tensors, const std::string& name) {
    std::erase_if(tensors, [&](const WrittenTensor& tensor) { return tensor.name == name; });
    return tensors;
  }
  static std::vector<WrittenTensor> with(std::vector<WrittenTensor> tensors, const WrittenTensor& changed) {
    for (WrittenTensor& tensor : tensors)
      if (tensor.name == changed.name) tensor = changed;
    return tensors;
  }

  void expect_refused(const std::vector<WrittenTensor>& tensors, std::initializer_list<std::string> parts) {
    const Result<BertWeights> weights = validate(tensors);
    ASSERT_FALSE(weights.ok());
    EXPECT_EQ(weights.code(), Code::invalid_argument);
    EXPECT_THAT(std::string(weights.status().message()), HasSubstr(dir_.path().native()));
    for (const std::string& part : parts) EXPECT_THAT(std::string(weights.status().message()), HasSubstr(part));
  }

  accel::testing::ScratchDirectory dir_{"bert_weights_test"};
  int files_ = 0;
};

TEST_F(BertWeightsTest, AcceptsNamesWithAndWithoutTheBertPrefix) {
  const Result<BertWeights> plain = validate(tiny_tensors(""));
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  EXPECT_EQ(plain->prefix, "");
  EXPECT_EQ(plain->layers[1].query.weight.name, "encoder.layer.1.attention.self.query.weight");
  EXPECT_THAT(plain->layers[1].intermediate.weight.shape, ::testing::ElementsAre(8, 4));
  EXPECT_THAT(plain->word_embeddings.shape, ::testing::ElementsAre(10, 4));

  const Result<BertWeights> prefixed = validate(tiny_tensors("bert."));
  ASSERT_TRUE(prefixed.ok()) << prefixed.status().to_string();
  EXPECT_EQ(prefixed->prefix, "bert.");
  EXPECT_EQ(prefixed->embeddings_norm.bias.name, "bert.embeddings.LayerNorm.bias");

  // Half-precision checkpoints are as good.
  std::vector<WrittenTensor> half = tiny_tensors("");
  for (WrittenTensor& tensor : half)
    if (tensor.dtype == "F32") tensor.dtype = "F16";
  EXPECT_TRUE(validate(half).ok());
}

TEST_F(BertWeightsTest, NamesMissingMisshapedAndIntegerTensors) {
  expect_refused(without(tiny_tensors(""), "encoder.layer.1.output.LayerNorm.bias"),
                 {"1 of the 37 tensors a 2-layer BERT encoder reads is wrong",
                  "'encoder.layer.1.output.LayerNorm.bias' is missing"});
  expect_refused(with(tiny_tensors(""), {"embeddings.position_embeddings.weight", "F32", {512, 4}}),
                 {"'embeddings.position_embeddings.weight' is [512, 4], not [6, 4]"});
  expect_refused(with(tiny_tensors(""), {"encoder.layer.0.attention.self.key.weight", "F32", {16}}),
                 {"'encoder.layer.0.attention.self.key.weight' is [16], not [4, 4]"});
  expect_refused(with(tiny_tensors(""), {"encoder.layer.0.intermediate.dense.bias", "I32", {8}}),
                 {"'encoder.layer.0.intermediate.dense.bias' is I32, not a float type"});
  // A checkpoint of another layer count: every tensor of the missing layer named, up to a point.
  std::vector<WrittenTensor> one_layer = tiny_tensors("");
  std::erase_if(one_layer, [](const WrittenTensor& tensor) { return tensor.name.starts_with("encoder.layer.1."); });
  expect_refused(one_layer, {"16 of the 37 tensors", "are wrong",
                             "'encoder.layer.1.attention.self.query.weight' is "
                             "missing",
                             "; ..."});
}

TEST_F(BertWeightsTest, RefusesACheckpointThatIsNotBert) {
  expect_refused(
      {{"transformer.wte.weight", "F32", {10, 4}}},
      {"not a BERT checkpoint", "'embeddings.word_embeddings.weight'", "'bert.embeddings.word_embeddings.weight'"});
  // The prefix is decided by the word embeddings; a mixture is refused by name, not guessed at.
  std::vector<WrittenTensor> mixed = tiny_tensors("bert.");
  mixed[1].name = mixed[1].name.substr(5);
  expect_refused(mixed, {"'bert.embeddings.position_embeddings.weight' is missing"});
}

}  // namespace
}  // namespace accel::embed

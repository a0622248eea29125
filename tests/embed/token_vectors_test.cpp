// Model::embed_token_vectors and Model::decode on the CPU device with the tiny family models: the per-token vectors
// are the encoder's states the head pools (pooled here as the folder's pooling says, they give embed()'s rows), they
// do not depend on what they are packed with or how the batch is cut into runs, and a cross-encoder (token types)
// answers them too; the rotary families' first vectors are their cls embeddings. decode gives back the text the ids
// were tokenised from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "accel/device/device.hpp"
#include "embed/family_references.hpp"

namespace accel::embed {
namespace {

using testing::kFamilies;
using testing::references;
using testing::strings;

class TokenVectorsTest : public ::testing::Test {
 protected:
  std::shared_ptr<Model> load(const std::string& name, std::uint32_t batch_tokens = 512) {
    Result<std::shared_ptr<Model>> model =
        Model::load(device_, {.folder = kFamilies / name, .batch_tokens = batch_tokens});
    EXPECT_TRUE(model.ok()) << model.status().to_string();
    return model.ok() ? *model : nullptr;
  }

  // Every text's token vectors, and embed()'s rows of the same texts.
  struct Both {
    TokenBatch tokens;
    Embeddings vectors;
    Embeddings pooled;
  };
  Both run_both(Model& model, const std::vector<std::string>& texts) {
    Both both;
    Result<TokenBatch> tokens = model.tokenize(texts);
    EXPECT_TRUE(tokens.ok()) << tokens.status().to_string();
    both.tokens = *tokens;
    Result<Embeddings> vectors = model.embed_token_vectors(*tokens).wait();
    EXPECT_TRUE(vectors.ok()) << vectors.status().to_string();
    Result<Embeddings> pooled = model.embed(texts).wait();
    EXPECT_TRUE(pooled.ok()) << pooled.status().to_string();
    if (vectors.ok()) both.vectors = std::move(*vectors);
    if (pooled.ok()) both.pooled = std::move(*pooled);
    return both;
  }

  System system_;
  Device device_ = *Device::open(system_, {.kind = DeviceKind::cpu});
};

std::vector<float> unit(std::vector<float> v) {
  double squares = 0;
  for (float x : v) squares += double{x} * x;
  for (float& x : v) x = static_cast<float>(x / std::max(std::sqrt(squares), 1e-12));
  return v;
}

TEST_F(TokenVectorsTest, MaxOfTheTokenVectorsIsTheMaxPooledEmbedding) {
  std::shared_ptr<Model> model = load("roberta_max_norm");
  ASSERT_NE(model, nullptr);
  const std::vector<std::string> texts = strings(references().at("texts"));
  const Both both = run_both(*model, texts);
  ASSERT_EQ(both.vectors.dimensions, model->info().hidden);
  ASSERT_EQ(both.vectors.values.size(), both.tokens.ids.size() * model->info().hidden);
  ASSERT_EQ(both.vectors.count(), texts.size());
  for (std::size_t s = 0; s < texts.size(); ++s) {
    EXPECT_EQ(both.vectors.tokens[s], both.tokens.length(s));
    std::vector<float> max(model->info().hidden, -INFINITY);
    for (std::uint32_t t = both.tokens.offsets[s]; t < both.tokens.offsets[s + 1]; ++t)
      for (std::uint32_t d = 0; d < max.size(); ++d) max[d] = std::max(max[d], both.vectors.row(t)[d]);
    max = unit(std::move(max));
    for (std::uint32_t d = 0; d < max.size(); ++d) ASSERT_NEAR(max[d], both.pooled.row(s)[d], 1e-5) << "text " << s;
  }
}

TEST_F(TokenVectorsTest, TheLastTokenVectorIsTheLastTokenEmbedding) {
  std::shared_ptr<Model> model = load("distilbert_lasttoken");
  ASSERT_NE(model, nullptr);
  const std::vector<std::string> texts = strings(references().at("texts"));
  const Both both = run_both(*model, texts);
  ASSERT_EQ(both.vectors.values.size(), both.tokens.ids.size() * model->info().hidden);
  for (std::size_t s = 0; s < texts.size(); ++s) {
    const std::span<const float> last = both.vectors.row(both.tokens.offsets[s + 1] - 1);
    std::vector<float> expected(last.begin(), last.end());
    if (model->info().normalized) expected = unit(std::move(expected));
    for (std::uint32_t d = 0; d < expected.size(); ++d)
      ASSERT_NEAR(expected[d], both.pooled.row(s)[d], 1e-5) << "text " << s;
  }
}

// The post-norm rotary encoders, GTE's rotated through tables (its token-vectors graph reads them from the model's
// weights buffer too).
TEST_F(TokenVectorsTest, TheFirstTokenVectorIsTheClsEmbeddingOfTheRotaryRemoteFamilies) {
  for (const std::string name : {"nomic_bias_geglu_cls", "gte_ntk_cls"}) {
    std::shared_ptr<Model> model = load(name);
    ASSERT_NE(model, nullptr);
    const std::vector<std::string> texts = strings(references().at("texts"));
    const Both both = run_both(*model, texts);
    ASSERT_EQ(both.vectors.values.size(), both.tokens.ids.size() * model->info().hidden);
    for (std::size_t s = 0; s < texts.size(); ++s) {
      const std::span<const float> first = both.vectors.row(both.tokens.offsets[s]);
      for (std::uint32_t d = 0; d < first.size(); ++d)
        ASSERT_NEAR(first[d], both.pooled.row(s)[d], 1e-5) << name << " text " << s;
    }
  }
}

TEST_F(TokenVectorsTest, RunsOfFewTokensAndPackedNeighboursNeverChangeAVector) {
  std::shared_ptr<Model> model = load("roberta_max_norm", 128);
  ASSERT_NE(model, nullptr);
  const std::vector<std::string> texts = strings(references().at("texts"));
  Result<TokenBatch> tokens = model->tokenize(texts);
  ASSERT_TRUE(tokens.ok());
  Result<Embeddings> together = model->embed_token_vectors(*tokens).wait();
  ASSERT_TRUE(together.ok()) << together.status().to_string();
  EXPECT_GT(model->stats().runs, 1u) << "runs of 128 tokens split the batch";
  for (std::size_t s = 0; s < texts.size(); s += 5) {
    Result<Embeddings> alone = model->embed_token_vectors(*model->tokenize(std::vector<std::string>{texts[s]})).wait();
    ASSERT_TRUE(alone.ok());
    for (std::uint32_t t = 0; t < tokens->length(s); ++t)
      for (std::uint32_t d = 0; d < alone->dimensions; ++d)
        ASSERT_NEAR(alone->row(t)[d], together->row(tokens->offsets[s] + t)[d], 1e-5) << "text " << s;
  }
}

TEST_F(TokenVectorsTest, ACrossEncoderAnswersThemTooAndBadIdsAreRefused) {
  std::shared_ptr<Model> model = load("bert_reranker");
  ASSERT_NE(model, nullptr);
  Result<TokenBatch> pairs = model->tokenize_pairs("a query", strings(references().at("passages")));
  ASSERT_TRUE(pairs.ok());
  Result<Embeddings> vectors = model->embed_token_vectors(*pairs).wait();
  ASSERT_TRUE(vectors.ok()) << vectors.status().to_string();
  ASSERT_EQ(vectors->values.size(), pairs->ids.size() * model->info().hidden);
  EXPECT_TRUE(std::ranges::all_of(vectors->values, [](float v) { return std::isfinite(v); }));

  TokenBatch bad;
  bad.append(std::vector<std::int32_t>{1, static_cast<std::int32_t>(model->info().vocabulary)});
  EXPECT_EQ(model->embed_token_vectors(bad).wait().code(), Code::invalid_argument);
}

TEST_F(TokenVectorsTest, DecodeGivesBackTheTextTheIdsCameFrom) {
  std::shared_ptr<Model> model = load("bert_mean_dense_norm");
  ASSERT_NE(model, nullptr);
  Result<TokenBatch> tokens = model->tokenize(std::vector<std::string>{"hello world"});
  ASSERT_TRUE(tokens.ok());
  Result<std::string> text = model->decode(tokens->ids, true);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_EQ(*text, "hello world");
  Result<std::string> with_special = model->decode(tokens->ids, false);
  ASSERT_TRUE(with_special.ok());
  EXPECT_GT(with_special->size(), text->size());
}

}  // namespace
}  // namespace accel::embed

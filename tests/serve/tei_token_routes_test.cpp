// TEI's token routes over real HTTP on loopback, on the CPU device: /decode gives back the text the ids came from
// (as the model's tokenizer decodes: tests/text/decode_golden_test.cpp holds that to `tokenizers`), /embed_all the
// encoder's per-token vectors, which pooled as the folder says give sentence-transformers' embeddings
// (references.json); requests of both kinds batched together are each answered right; and each route's refusals
// name the field at fault.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/routes_fixture.hpp"

namespace accel::serve {
namespace {

TEST_F(RoutesTest, DecodeGivesBackTheTokenizedText) {
  for (const std::string name : {"bert_mean_dense_norm", "xlmr_weightedmean_prompts", "roberta_max_norm"}) {
    serve(name);
    const std::vector<std::string> texts = {"hello world", "The quick brown fox jumps over the lazy dog."};
    Result<embed::TokenBatch> tokens = model_->tokenize(texts);
    ASSERT_TRUE(tokens.ok());
    json batch = json::array();
    for (std::size_t s = 0; s < texts.size(); ++s)
      batch.push_back(std::vector<std::int32_t>(tokens->ids.begin() + tokens->offsets[s],
                                                tokens->ids.begin() + tokens->offsets[s + 1]));
    auto [status, body] = post("/decode", {{"ids", batch}});
    ASSERT_EQ(status, 200) << name << ": " << body;
    ASSERT_EQ(body.size(), texts.size());
    for (std::size_t s = 0; s < texts.size(); ++s) {
      const std::vector<std::int32_t> ids = batch[s];
      EXPECT_EQ(body[s], *model_->decode(ids, true)) << name;
      // A tokenizer of a tiny vocabulary may not spell every word back; the words it has come back as they were.
      if (name == "bert_mean_dense_norm" && s == 0) {
        EXPECT_EQ(body[s], "hello world");
      }
    }
    // One sequence is answered as an array of one string; special tokens kept when asked.
    std::tie(status, body) = post("/decode", {{"ids", batch[0]}, {"skip_special_tokens", false}});
    ASSERT_EQ(status, 200) << body;
    ASSERT_EQ(body.size(), 1u);
    EXPECT_EQ(body[0], *model_->decode(batch[0].get<std::vector<std::int32_t>>(), false));
    EXPECT_NE(body[0], *model_->decode(batch[0].get<std::vector<std::int32_t>>(), true)) << name;
  }
  // TEI's InputIds: the empty array is one empty sequence; ids outside the vocabulary are left out.
  auto [status, body] = post("/decode", {{"ids", json::array()}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body, json::array({""}));
  std::tie(status, body) = post("/decode", {{"ids", {4294967295u, 3000000000u}}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body, json::array({""}));
}

TEST_F(RoutesTest, DecodeRefusesEachWrongFieldByName) {
  serve("bert_mean_dense_norm", {.max_inputs = 2});
  expect_tei_error("/decode", json::object(), 400, "Validation", "'ids'");
  expect_tei_error("/decode", {{"ids", "1 2"}}, 400, "Validation", "'ids'");
  expect_tei_error("/decode", {{"ids", {1, "a"}}}, 400, "Validation", "'ids[1]'");
  expect_tei_error("/decode", {{"ids", {1, -1}}}, 400, "Validation", "'ids[1]'");
  expect_tei_error("/decode", {{"ids", {1, 2.5}}}, 400, "Validation", "'ids[1]'");
  expect_tei_error("/decode", {{"ids", {1, 4294967296u}}}, 400, "Validation", "'ids[1]'");
  expect_tei_error("/decode", {{"ids", {{1}, 2}}}, 400, "Validation", "'ids[1]'");
  expect_tei_error("/decode", {{"ids", {{1}, {2, true}}}}, 400, "Validation", "'ids[1][1]'");
  expect_tei_error("/decode", {{"ids", {1}}, {"skip_special_tokens", "yes"}}, 400, "Validation",
                   "'skip_special_tokens'");
  expect_tei_error("/decode", {{"ids", {{1}, {2}, {3}}}}, 413, "Validation", "max_inputs");
}

// Each input's per-token vectors: the rows of /embed_all's answer.
std::vector<std::vector<float>> token_rows(const json& input) {
  std::vector<std::vector<float>> rows;
  for (const json& row : input) rows.push_back(row.get<std::vector<float>>());
  return rows;
}

TEST_F(RoutesTest, EmbedAllPooledIsSentenceTransformersEmbedding) {
  serve("roberta_max_norm");
  const json texts = references().at("texts");
  auto [status, body] = post("/embed_all", {{"inputs", texts}, {"truncate", true}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  ASSERT_EQ(body.size(), texts.size());
  Result<embed::TokenBatch> tokens = model_->tokenize(strings(texts));
  ASSERT_TRUE(tokens.ok());
  const json& expected = references().at("models").at("roberta_max_norm").at("embeddings");
  for (std::size_t s = 0; s < texts.size(); ++s) {
    const std::vector<std::vector<float>> rows = token_rows(body[s]);
    ASSERT_EQ(rows.size(), tokens->length(s)) << "text " << s;
    // Max pooling, then unit length: the folder's head, applied to the answer, gives the reference.
    std::vector<double> pooled(rows[0].size(), -1e30);
    for (const auto& row : rows) {
      ASSERT_EQ(row.size(), model_->info().hidden);
      for (std::size_t d = 0; d < row.size(); ++d) pooled[d] = std::max(pooled[d], double{row[d]});
    }
    double norm = 0;
    for (double v : pooled) norm += v * v;
    const std::vector<double> reference = expected[s].get<std::vector<double>>();
    for (std::size_t d = 0; d < pooled.size(); ++d)
      ASSERT_NEAR(pooled[d] / std::sqrt(norm), reference[d], 1e-4) << "text " << s << " dimension " << d;
  }
}

TEST_F(RoutesTest, EmbedAllAndEmbedBatchedTogetherAreEachAnsweredRight) {
  ServeOptions options;
  options.batching.max_wait = std::chrono::milliseconds(50);  // so that the requests below meet in one batch
  serve("roberta_max_norm", options);
  const std::vector<std::string> texts = strings(references().at("texts"));
  const json& expected = references().at("models").at("roberta_max_norm").at("embeddings");
  std::vector<std::future<std::pair<int, json>>> replies;
  for (std::size_t i = 0; i < 8; ++i) {
    const std::string path = i % 2 == 0 ? "/embed" : "/embed_all";
    replies.push_back(std::async(std::launch::async, [this, path, text = texts[i + 1]] {
      return post(path, {{"inputs", text}, {"truncate", true}});
    }));
  }
  for (std::size_t i = 0; i < replies.size(); ++i) {
    auto [status, body] = replies[i].get();
    ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
    ASSERT_EQ(body.size(), 1u);
    if (i % 2 == 0) {
      EXPECT_GE(embed::testing::cosine(rows_of(body).row(0), expected[i + 1].get<std::vector<double>>()), 0.99999);
    } else {
      Result<embed::Embeddings> vectors = model_->embed_token_vectors(*model_->tokenize({{texts[i + 1]}})).wait();
      ASSERT_TRUE(vectors.ok());
      const std::vector<std::vector<float>> rows = token_rows(body[0]);
      ASSERT_EQ(rows.size() * vectors->dimensions, vectors->values.size());
      for (std::size_t t = 0; t < rows.size(); ++t)
        for (std::size_t d = 0; d < rows[t].size(); ++d) ASSERT_NEAR(rows[t][d], vectors->row(t)[d], 1e-5);
    }
  }
}

TEST_F(RoutesTest, EmbedAllServesEveryHeadAndRefusesEachWrongFieldByName) {
  serve("bert_reranker");
  auto [status, body] = post("/embed_all", {{"inputs", {"a query", "a passage"}}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body.size(), 2u);

  ServeOptions options;
  options.batching.batch_tokens = 64;
  serve("bert_mean_dense_norm", options);
  expect_tei_error("/embed_all", {{"inputs", 3}}, 400, "Validation", "'inputs'");
  expect_tei_error("/embed_all", {{"inputs", {"a", 3}}}, 400, "Validation", "'inputs[1]'");
  expect_tei_error("/embed_all", {{"inputs", "a"}, {"normalize", true}}, 400, "Validation", "'normalize'");
  expect_tei_error("/embed_all", {{"inputs", "a"}, {"dimensions", 8}}, 400, "Validation", "'dimensions'");
  expect_tei_error("/embed_all", {{"inputs", "a"}, {"truncate", "yes"}}, 400, "Validation", "'truncate'");
  expect_tei_error("/embed_all", {{"inputs", "a"}, {"truncation_direction", "up"}}, 400, "Validation",
                   "'truncation_direction'");
  expect_tei_error("/embed_all", {{"inputs", "a"}, {"prompt_name", "nope"}}, 400, "Validation", "prompt_name");
  std::string long_text;
  for (int i = 0; i < 600; ++i) long_text += "word ";
  expect_tei_error("/embed_all", {{"inputs", long_text}}, 413, "Validation", "max_sequence_length");
  expect_tei_error("/embed_all", {{"inputs", {long_text, long_text}}, {"truncate", true}}, 413, "Validation",
                   "batch_tokens");
}

}  // namespace
}  // namespace accel::serve

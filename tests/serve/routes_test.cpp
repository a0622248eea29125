// Every route of the server over real HTTP on loopback, on the CPU device, with the tiny model of each kind
// (tests/embed/data/families/): answers checked against what transformers and sentence-transformers computed
// (references.json), then the refusals: a wrong field type, a route the model's head does not fit, a too-long input.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/routes_fixture.hpp"

namespace accel::serve {
namespace {

TEST_F(RoutesTest, EmbedAndOpenAiMatchSentenceTransformersWithPromptsAndDimensions) {
  serve("bert_mean_dense_norm");
  const json& expected = references().at("models").at("bert_mean_dense_norm");
  const json texts = references().at("texts");
  auto [status, body] = post("/embed", {{"inputs", texts}, {"truncate", true}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  embed::testing::expect_dense(rows_of(body), expected.at("embeddings"), {}, "/embed");

  std::tie(status, body) = post("/embed", {{"inputs", texts}, {"truncate", true}, {"prompt_name", "query"}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  embed::testing::expect_dense(rows_of(body), expected.at("embeddings_prompt_name=query"), {}, "/embed query");

  std::tie(status, body) = post("/embed", {{"inputs", texts}, {"truncate", true}, {"dimensions", 5}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  embed::testing::expect_dense(rows_of(body), cut_and_normalize(expected.at("embeddings"), 5), {}, "/embed 5");

  std::tie(status, body) = post("/v1/embeddings", {{"input", texts}, {"truncate", true}, {"dimensions", 7}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  json rows = json::array();
  for (const json& item : body["data"]) rows.push_back(item["embedding"]);
  embed::testing::expect_dense(rows_of(rows), cut_and_normalize(expected.at("embeddings"), 7), {}, "/v1 7");
  EXPECT_GT(body["usage"]["prompt_tokens"].get<int>(), 0);
}

TEST_F(RoutesTest, EmbedNormalizesAModelThatDoesNotUnlessToldNot) {
  serve("bert_bare");
  const json& expected = references().at("models").at("bert_bare").at("embeddings");
  const json texts = references().at("texts");
  auto [status, body] = post("/embed", {{"inputs", texts}, {"truncate", true}, {"normalize", false}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  embed::testing::expect_dense(rows_of(body), expected, {}, "raw");
  std::tie(status, body) = post("/embed", {{"inputs", texts}, {"truncate", true}});
  ASSERT_EQ(status, 200);
  embed::testing::expect_dense(rows_of(body), cut_and_normalize(expected, expected[0].size()), {}, "normalised");
}

TEST_F(RoutesTest, EmbedSparseAnswersSpladeTermsAsIndexValuePairs) {
  serve("distilbert_splade");
  const json& expected = references().at("models").at("distilbert_splade").at("sparse");
  auto [status, body] = post("/embed_sparse", {{"inputs", references().at("splade_texts")}, {"truncate", true}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  ASSERT_EQ(body.size(), expected.size());
  for (std::size_t i = 0; i < body.size(); ++i) {
    const auto indices = expected[i].at("indices").get<std::vector<std::uint32_t>>();
    const auto values = expected[i].at("values").get<std::vector<double>>();
    ASSERT_EQ(body[i].size(), indices.size()) << "input " << i;
    for (std::size_t k = 0; k < indices.size(); ++k) {
      EXPECT_EQ(body[i][k]["index"], indices[k]) << "input " << i;
      EXPECT_NEAR(body[i][k]["value"].get<double>(), values[k], 1e-3) << "input " << i;
    }
  }
}

TEST_F(RoutesTest, RerankSortsByTheCrossEncodersScoreAsTeiDoes) {
  serve("bert_reranker");
  const json& scores = references().at("models").at("bert_reranker").at("scores");
  const json passages = references().at("passages");
  for (std::size_t q = 0; q < references().at("queries").size(); ++q) {
    const json query = references().at("queries")[q];
    for (const bool raw : {true, false}) {
      auto [status, body] =
          post("/rerank",
               {{"query", query}, {"texts", passages}, {"raw_scores", raw}, {"return_text", true}, {"truncate", true}});
      ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
      ASSERT_EQ(body.size(), passages.size());
      for (std::size_t r = 0; r < body.size(); ++r) {
        const std::size_t index = body[r]["index"];
        const double logit = scores[q][index][0];
        EXPECT_NEAR(body[r]["score"].get<double>(), raw ? logit : sigmoid(logit), kScoreTolerance) << "query " << q;
        EXPECT_EQ(body[r]["text"], passages[index]);
        if (r > 0) {
          EXPECT_GE(body[r - 1]["score"].get<double>(), body[r]["score"].get<double>());
        }
      }
    }
  }
  auto [status, body] = post("/rerank", {{"query", "q"}, {"texts", {"a"}}});
  ASSERT_EQ(status, 200);
  EXPECT_FALSE(body[0].contains("text")) << "return_text defaults to false";
}

TEST_F(RoutesTest, PredictAnswersLabelledScoresOfTextsAndPairs) {
  serve("roberta_reranker");
  const json& scores = references().at("models").at("roberta_reranker").at("scores");
  const json query = references().at("queries")[0];
  const json passages = references().at("passages");
  json pairs = json::array();
  for (const json& passage : passages) pairs.push_back({query, passage});
  auto [status, body] = post("/predict", {{"inputs", pairs}, {"raw_scores", true}, {"truncate", true}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  ASSERT_EQ(body.size(), passages.size());
  for (std::size_t i = 0; i < body.size(); ++i) {
    ASSERT_EQ(body[i].size(), 2u);
    for (const json& answer : body[i]) {
      const std::size_t label = answer["label"] == "LABEL_0" ? 0 : 1;
      EXPECT_NEAR(answer["score"].get<double>(), scores[0][i][label].get<double>(), kScoreTolerance) << "pair " << i;
    }
  }
  // One pair, softmax-ed: two probabilities, best first, summing to one.
  std::tie(status, body) = post("/predict", {{"inputs", {query, passages[1]}}});
  ASSERT_EQ(status, 200) << body;
  ASSERT_EQ(body.size(), 2u);
  EXPECT_NEAR(body[0]["score"].get<double>() + body[1]["score"].get<double>(), 1.0, 1e-5);
  EXPECT_GE(body[0]["score"].get<double>(), body[1]["score"].get<double>());
  const double l0 = scores[0][1][0], l1 = scores[0][1][1];
  EXPECT_NEAR(body[0]["score"].get<double>(), std::exp(std::max(l0, l1)) / (std::exp(l0) + std::exp(l1)),
              kScoreTolerance);
}

TEST_F(RoutesTest, TokenizeShowsIdsPiecesOffsetsAndSpecialTokens) {
  serve("bert_mean_dense_norm");
  const std::vector<std::string> texts{"hello world", "The quick brown fox"};
  auto [status, body] = post("/tokenize", {{"inputs", texts}});
  ASSERT_EQ(status, 200) << body;
  Result<embed::TokenBatch> ids = model_->tokenize(texts);
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(body.size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(body[i].size(), ids->length(i));
    for (std::size_t t = 0; t < body[i].size(); ++t) {
      const json& token = body[i][t];
      EXPECT_EQ(token["id"], ids->ids[ids->offsets[i] + t]);
      const bool special = t == 0 || t + 1 == body[i].size();  // [CLS] ... [SEP]
      EXPECT_EQ(token["special"], special) << token;
      if (special) {
        EXPECT_TRUE(token["start"].is_null());
      } else {
        const std::size_t start = token["start"], stop = token["stop"];
        EXPECT_EQ(token["text"], texts[i].substr(start, stop - start)) << token;
      }
    }
  }
  const std::size_t with_special = body[0].size();
  std::tie(status, body) = post("/tokenize", {{"inputs", texts[0]}, {"add_special_tokens", false}});
  ASSERT_EQ(status, 200);
  ASSERT_EQ(body[0].size(), with_special - 2);
  for (const json& token : body[0]) EXPECT_FALSE(token["special"]) << token;
  // A prompt is tokenised with the text; offsets count bytes of the prompted text.
  std::tie(status, body) = post("/tokenize", {{"inputs", "hello"}, {"prompt_name", "query"}});
  ASSERT_EQ(status, 200);
  const json& pieces = body[0];
  EXPECT_EQ(pieces[1]["start"], 0);
  EXPECT_EQ(pieces[pieces.size() - 2]["stop"], std::string("query: hello").size());
}

TEST_F(RoutesTest, InfoSaysWhatTheModelIsAndTheLimits) {
  serve("roberta_reranker", {.max_inputs = 7, .auto_truncate = true});
  httplib::Client client("127.0.0.1", port_);
  httplib::Result result = client.Get("/info");
  ASSERT_TRUE(result);
  ASSERT_EQ(result->status, 200);
  const json info = json::parse(result->body);
  EXPECT_EQ(info["model_id"], "roberta_reranker");
  EXPECT_EQ(info["model_dtype"], "float32");
  EXPECT_EQ(info["family"], model_->info().family);
  EXPECT_EQ(info["max_input_length"], model_->info().max_sequence_length);
  EXPECT_EQ(info["max_client_batch_size"], 7);
  EXPECT_EQ(info["auto_truncate"], true);
  EXPECT_EQ(info["dimensions"], 2);
  EXPECT_EQ(info["model_type"]["classifier"]["id2label"]["1"], "LABEL_1");
}

TEST_F(RoutesTest, ARouteTheModelDoesNotFitSaysWhyInItsFamilysShape) {
  serve("bert_reranker");
  expect_tei_error("/embed", {{"inputs", "a"}}, 424, "Backend", "POST /embed needs a dense embedding model");
  expect_tei_error("/embed_sparse", {{"inputs", "a"}}, 424, "Backend", "SPLADE");
  auto [status, body] = post("/v1/embeddings", {{"input", "a"}});
  EXPECT_EQ(status, 424);
  EXPECT_NE(body["error"]["message"].get<std::string>().find("cross-encoder"), std::string::npos) << body;
  serve("roberta_reranker");
  expect_tei_error("/rerank", {{"query", "q"}, {"texts", {"a"}}}, 424, "Backend", "2 labels");
  serve("distilbert_splade");
  expect_tei_error("/rerank", {{"query", "q"}, {"texts", {"a"}}}, 424, "Backend", "SPLADE");
  expect_tei_error("/predict", {{"inputs", "a"}}, 424, "Backend", "cross-encoder");
}

TEST_F(RoutesTest, WrongTypesAndTooLongInputsNameTheField) {
  serve("bert_reranker");
  std::string long_text;
  for (int i = 0; i < 100; ++i) long_text += "word ";
  expect_tei_error("/rerank", {{"query", "q"}, {"texts", "a"}}, 400, "Validation", "'texts'");
  expect_tei_error("/rerank", {{"query", 1}, {"texts", {"a"}}}, 400, "Validation", "'query'");
  expect_tei_error("/rerank", {{"query", "q"}, {"texts", {"a"}}, {"raw_scores", "no"}}, 400, "Validation",
                   "'raw_scores'");
  expect_tei_error("/rerank", {{"query", "q"}, {"texts", {"a", long_text}}}, 413, "Validation", "'texts'");
  expect_tei_error("/predict", {{"inputs", {{"a", "b", "c"}}}}, 400, "Validation", "inputs[0]");
  expect_tei_error("/predict", {{"inputs", long_text}}, 413, "Validation", "max_sequence_length");
  expect_tei_error("/tokenize", {{"inputs", "a"}, {"add_special_tokens", 1}}, 400, "Validation",
                   "'add_special_tokens'");
  serve("bert_mean_dense_norm");
  expect_tei_error("/embed", {{"inputs", long_text}}, 413, "Validation", "'inputs'");
  expect_tei_error("/embed", {{"inputs", "a"}, {"prompt_name", "nope"}}, 400, "Validation", "'query'");
  expect_tei_error("/tokenize", {{"inputs", "a"}, {"prompt_name", "nope"}}, 400, "Validation", "'prompt_name'");
  expect_tei_error("/embed", {{"inputs", "a"}, {"truncation_direction", "middle"}}, 400, "Validation",
                   "'truncation_direction'");
  expect_tei_error("/embed", {{"inputs", "a"}, {"dimensions", 1000}}, 400, "Validation", "'dimensions'");
  auto [status, body] = post("/v1/embeddings", {{"input", long_text}});
  EXPECT_EQ(status, 413);
  EXPECT_EQ(body["error"]["param"], "input") << body;
}

TEST_F(RoutesTest, AutoTruncateCutsUnlessTheRequestSaysNotAndTheDirectionCounts) {
  serve("bert_mean_dense_norm", {.auto_truncate = true});
  std::string words;
  for (int i = 0; i < 100; ++i) words += (i < 50 ? "alpha " : "omega ");
  auto [status, right] = post("/embed", {{"inputs", words}});
  EXPECT_EQ(status, 200) << right;
  auto [left_status, left] = post("/embed", {{"inputs", words}, {"truncation_direction", "Left"}});
  EXPECT_EQ(left_status, 200) << left;
  EXPECT_NE(right, left) << "the two ends of the text differ, so their embeddings do";
  expect_tei_error("/embed", {{"inputs", words}, {"truncate", false}}, 413, "Validation", "max_sequence_length");
}

}  // namespace
}  // namespace accel::serve

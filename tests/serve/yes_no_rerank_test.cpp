// A Qwen3-Reranker-style yes/no reranker (tests/embed/data/families/qwen3_reranker) served over real HTTP on
// loopback, on the CPU device: TEI's /rerank and Cohere's /v1/rerank answer P(yes) = sigmoid(logit yes - logit no),
// as the model card computes it (references.json), or with raw_scores the logit difference itself; /predict and
// /info see one score named "yes".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "serve/routes_fixture.hpp"

namespace accel::serve {
namespace {

TEST_F(RoutesTest, YesNoRerankerAnswersTheModelCardsProbabilityOnBothRerankRoutes) {
  serve("qwen3_reranker");
  const json& scores = references().at("models").at("qwen3_reranker").at("scores");
  const json passages = references().at("passages");
  for (std::size_t q = 0; q < references().at("queries").size(); ++q) {
    const json query = references().at("queries")[q];
    auto [status, body] = post("/rerank", {{"query", query}, {"texts", passages}, {"truncate", true}});
    ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
    ASSERT_EQ(body.size(), passages.size());
    for (const json& result : body)
      EXPECT_NEAR(result["score"].get<double>(), sigmoid(scores[q][result["index"].get<std::size_t>()][0]),
                  kScoreTolerance)
          << "query " << q;
    std::tie(status, body) =
        post("/rerank", {{"query", query}, {"texts", passages}, {"raw_scores", true}, {"truncate", true}});
    ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
    for (const json& result : body)
      EXPECT_NEAR(result["score"].get<double>(), scores[q][result["index"].get<std::size_t>()][0].get<double>(),
                  kScoreTolerance)
          << "query " << q;
    std::tie(status, body) = post("/v1/rerank", {{"query", query}, {"documents", passages}, {"truncate", true}});
    ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
    ASSERT_EQ(body["results"].size(), passages.size());
    for (const json& result : body["results"])
      EXPECT_NEAR(result["relevance_score"].get<double>(), sigmoid(scores[q][result["index"].get<std::size_t>()][0]),
                  kScoreTolerance)
          << "query " << q;
  }
  // The longest passage does not fit untruncated.
  auto [status, body] = post("/rerank", {{"query", "q"}, {"texts", {passages.back()}}, {"truncate", false}});
  EXPECT_EQ(status, 413) << body.dump().substr(0, 300);
  EXPECT_EQ(model_->info().labels, std::vector<std::string>{"yes"});
}

}  // namespace
}  // namespace accel::serve

// POST /v1/rerank in Cohere's and Jina's request shape over real HTTP on loopback, on the CPU device: scores against
// transformers' logits (references.json), top_n, return_documents, and refusals in OpenAI's error shape.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "serve/routes_fixture.hpp"

namespace accel::serve {
namespace {

TEST_F(RoutesTest, CohereRerankAnswersTheBestTopNWithTheirDocuments) {
  serve("bert_reranker");
  const json& scores = references().at("models").at("bert_reranker").at("scores");
  const json passages = references().at("passages");
  const json query = references().at("queries")[0];
  ASSERT_GE(passages.size(), 3u);
  json documents = json::array();
  for (std::size_t i = 0; i < passages.size(); ++i)
    documents.push_back(i % 2 == 0 ? passages[i] : json{{"text", passages[i]}});  // both shapes in one request
  auto [status, body] = post("/v1/rerank", {{"model", "rr"},
                                            {"query", query},
                                            {"documents", documents},
                                            {"top_n", 2},
                                            {"return_documents", true},
                                            {"truncate", true}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  EXPECT_EQ(body["model"], "rr");
  EXPECT_GT(body["usage"]["total_tokens"].get<int>(), 0);
  ASSERT_EQ(body["results"].size(), 2u);
  for (std::size_t r = 0; r < 2; ++r) {
    const json& result = body["results"][r];
    const std::size_t index = result["index"];
    EXPECT_NEAR(result["relevance_score"].get<double>(), sigmoid(scores[0][index][0].get<double>()), kScoreTolerance);
    EXPECT_EQ(result["document"]["text"], passages[index]);
  }
  EXPECT_GE(body["results"][0]["relevance_score"].get<double>(), body["results"][1]["relevance_score"].get<double>());

  std::tie(status, body) = post("/v1/rerank", {{"query", query}, {"documents", passages}, {"truncate", true}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  EXPECT_EQ(body["results"].size(), passages.size()) << "no top_n: every document";
  EXPECT_FALSE(body["results"][0].contains("document")) << "return_documents defaults to false";
  EXPECT_EQ(body["model"], model_->info().name);
}

TEST_F(RoutesTest, CohereRerankRefusesEachWrongFieldByNameInOpenAisShape) {
  serve("bert_reranker");
  const std::vector<std::pair<json, std::string>> refused = {
      {{{"documents", {"a"}}}, "query"},
      {{{"query", "q"}}, "documents"},
      {{{"query", "q"}, {"documents", json::array()}}, "documents"},
      {{{"query", "q"}, {"documents", {"a", 3}}}, "documents[1]"},
      {{{"query", "q"}, {"documents", {{{"txt", "a"}}}}}, "documents[0].text"},
      {{{"query", "q"}, {"documents", {"a"}}, {"top_n", 0}}, "top_n"},
      {{{"query", "q"}, {"documents", {"a"}}, {"top_n", "2"}}, "top_n"},
      {{{"query", "q"}, {"documents", {"a"}}, {"return_documents", 1}}, "return_documents"},
      {{{"query", "q"}, {"documents", {"a"}}, {"model", 1}}, "model"},
  };
  for (const auto& [request, field] : refused) {
    auto [status, body] = post("/v1/rerank", request);
    EXPECT_EQ(status, 400) << request.dump() << " -> " << body.dump();
    EXPECT_EQ(body["error"]["param"], field) << request.dump() << " -> " << body.dump();
  }
  serve("bert_mean_dense_norm");
  auto [status, body] = post("/v1/rerank", {{"query", "q"}, {"documents", {"a"}}});
  EXPECT_EQ(status, 424) << body;
}

}  // namespace
}  // namespace accel::serve

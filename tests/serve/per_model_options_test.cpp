// Each model of one server with options of its own (ModelServeOptions, `accel serve`'s per-model options), over
// real HTTP on loopback on the CPU device: a served name replaces the folder's (in requests, responses, /v1/models,
// /info and /metrics), and each model batches, truncates and prompts by its own options, which /info reports.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/routes_fixture.hpp"

namespace accel::serve {
namespace {

class PerModelOptionsTest : public RoutesTest {
 protected:
  // Serves each tiny model of `models` (its folder, its options) on one device, the first by default.
  void serve_each(const std::vector<std::pair<std::string, ModelServeOptions>>& models) {
    ServeOptions options;
    options.port = 0;
    options.keep_alive_seconds = 1;
    server_ = std::make_unique<EmbeddingServer>(options);
    Result<int> port = server_->start();
    ASSERT_TRUE(port.ok()) << port.status().to_string();
    port_ = *port;
    std::vector<ServedModel> served;
    for (const auto& [folder, own] : models) {
      Result<std::shared_ptr<embed::Model>> model =
          embed::Model::load(device_, {.folder = embed::testing::kFamilies / folder, .batch_tokens = 512});
      ASSERT_TRUE(model.ok()) << folder << ": " << model.status().to_string();
      served.push_back({*model, device_, {}, own});
    }
    Status attached = server_->attach(std::move(served));
    ASSERT_TRUE(attached.ok()) << attached.to_string();
  }

  json get(const std::string& path) const {
    httplib::Client client("127.0.0.1", port_);
    httplib::Result result = client.Get(path);
    EXPECT_TRUE(result && result->status == 200) << path;
    return result ? json::parse(result->body, nullptr, false) : json();
  }
};

TEST_F(PerModelOptionsTest, AServedNameReplacesTheFoldersEverywhere) {
  serve_each({{"bert_mean_dense_norm", {.name = "embedder"}}, {"bert_reranker", {.name = "reranker"}}});
  const json listed = get("/v1/models");
  ASSERT_EQ(listed["data"].size(), 2u);
  EXPECT_EQ(listed["data"][0]["id"], "embedder");
  EXPECT_EQ(listed["data"][1]["id"], "reranker");
  EXPECT_EQ(get("/info?model=reranker")["model_id"], "reranker");
  EXPECT_EQ(get("/info")["models"], json::array({"embedder", "reranker"}));

  auto [status, body] = post("/v1/embeddings", {{"input", "a cat"}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["model"], "embedder");  // the default, by its served name
  std::tie(status, body) = post("/v1/rerank", {{"model", "reranker"}, {"query", "q"}, {"documents", {"a", "b"}}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["results"].size(), 2u);
  // The folder's name is not served any more.
  std::tie(status, body) = post("/v1/embeddings", {{"input", "a"}, {"model", "bert_mean_dense_norm"}});
  EXPECT_EQ(status, 400) << body;
  EXPECT_NE(body["error"]["message"].get<std::string>().find("'embedder', 'reranker'"), std::string::npos) << body;

  const std::string metrics =
      metrics_with({"accel_serve_requests_total{model=\"reranker\",endpoint=\"/v1/rerank\",status=\"200\"} 1"});
  EXPECT_NE(metrics.find("\naccel_serve_inputs_total{model=\"embedder\"} 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\naccel_serve_requests_total{model=\"reranker\",endpoint=\"/v1/rerank\",status=\"200\"} 1\n"),
            std::string::npos);
}

TEST_F(PerModelOptionsTest, EachModelBatchesTruncatesAndPromptsByItsOwnOptions) {
  serve_each({{"bert_mean_dense_norm",
               {.batch_tokens = 1024, .max_batch_requests = 4, .auto_truncate = true, .default_prompt = "query: "}},
              {"xlmr_weightedmean_prompts", {.default_prompt_name = "passage"}},
              {"bert_reranker", {}}});
  const json first = get("/info?model=bert_mean_dense_norm");
  EXPECT_EQ(first["max_batch_tokens"], 1024);
  EXPECT_EQ(first["max_batch_requests"], 4);
  EXPECT_EQ(first["auto_truncate"], true);
  EXPECT_EQ(first["server_default_prompt"], "query: ");
  const json third = get("/info?model=bert_reranker");
  EXPECT_EQ(third["max_batch_tokens"], ServeOptions{}.batching.batch_tokens);  // the server's
  EXPECT_TRUE(third["max_batch_requests"].is_null());
  EXPECT_EQ(third["auto_truncate"], false);
  EXPECT_EQ(get("/info?model=xlmr_weightedmean_prompts")["server_default_prompt_name"], "passage");

  // Texts as sentence-transformers embeds them with each model's prompt; the first cuts long texts by itself.
  const json texts = references().at("texts");
  auto [status, body] = post("/embed", {{"inputs", texts}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  embed::testing::expect_dense(rows_of(body),
                               references().at("models").at("bert_mean_dense_norm").at("embeddings_prompt_name=query"),
                               {}, "the first model's prompt text, cut by its auto_truncate");
  std::tie(status, body) =
      post("/embed", {{"inputs", texts}, {"truncate", true}, {"model", "xlmr_weightedmean_prompts"}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  embed::testing::expect_dense(
      rows_of(body), references().at("models").at("xlmr_weightedmean_prompts").at("embeddings_prompt_name=passage"), {},
      "the second model's prompt name");

  // Too long for the models: the first cuts, the reranker (the server's default: refuse) answers 413.
  std::string long_text;
  for (int i = 0; i < 3000; ++i) long_text += "word ";
  std::tie(status, body) = post("/embed", {{"inputs", long_text}});
  EXPECT_EQ(status, 200) << body.dump().substr(0, 300);
  std::tie(status, body) = post("/rerank", {{"model", "bert_reranker"}, {"query", "q"}, {"texts", {long_text}}});
  EXPECT_EQ(status, 413) << body.dump().substr(0, 300);
}

}  // namespace
}  // namespace accel::serve

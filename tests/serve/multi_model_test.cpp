// Several models in one server over real HTTP on loopback, on the CPU device: an embedder and a cross-encoder (and a
// SPLADE model) of tests/embed/data/families/, each with its own batcher, chosen by a request's "model" (the folder's
// name), the first by default; answers against references.json; an unknown model or a "model" that is not a string
// answered 400 naming it; /health ready only once all are attached; /info, /v1/models and /metrics per model.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "serve/routes_fixture.hpp"

namespace accel::serve {
namespace {

using embed::testing::kFamilies;

class MultiModelTest : public RoutesTest {
 protected:
  // Serves the tiny models `names` (the first the default) on one device.
  void serve_all(const std::vector<std::string>& names, ServeOptions options = {}) {
    options.port = 0;
    options.keep_alive_seconds = 1;
    server_ = std::make_unique<EmbeddingServer>(options);
    Result<int> port = server_->start();
    ASSERT_TRUE(port.ok()) << port.status().to_string();
    port_ = *port;
    EXPECT_EQ(get("/health").first, 503) << "ready before any model is attached";
    std::vector<ServedModel> served;
    for (const std::string& name : names) {
      Result<std::shared_ptr<embed::Model>> model =
          embed::Model::load(device_, {.folder = kFamilies / name, .batch_tokens = 512});
      ASSERT_TRUE(model.ok()) << name << ": " << model.status().to_string();
      models_[name] = *model;
      served.push_back({*model, device_, {}, {}});
    }
    ASSERT_TRUE(server_->attach(std::move(served)).ok());
  }

  std::pair<int, std::string> get(const std::string& path) const {
    httplib::Client client("127.0.0.1", port_);
    httplib::Result result = client.Get(path);
    return result ? std::pair{result->status, result->body} : std::pair{-1, std::string()};
  }

  std::map<std::string, std::shared_ptr<embed::Model>> models_;
};

TEST_F(MultiModelTest, EachRequestIsAnsweredByTheModelItNamesAndTheFirstByDefault) {
  serve_all({"bert_mean_dense_norm", "bert_reranker"});
  EXPECT_EQ(get("/health").first, 200);
  const json texts = references().at("texts");
  const json& expected = references().at("models").at("bert_mean_dense_norm").at("embeddings");

  // OpenAI's route, by name; TEI's, by default and by name.
  auto [status, body] =
      post("/v1/embeddings", {{"input", texts}, {"model", "bert_mean_dense_norm"}, {"truncate", true}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  EXPECT_EQ(body["model"], "bert_mean_dense_norm");
  json rows = json::array();
  for (const json& item : body["data"]) rows.push_back(item["embedding"]);
  embed::testing::expect_dense(rows_of(rows), expected, {}, "/v1/embeddings by name");
  std::tie(status, body) = post("/embed", {{"inputs", texts}, {"truncate", true}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  embed::testing::expect_dense(rows_of(body), expected, {}, "/embed by default");

  // The cross-encoder, by name on either family's route; the embedder cannot rerank.
  const json passages = references().at("passages");
  const json& scores = references().at("models").at("bert_reranker").at("scores");
  const std::string query = references().at("queries")[0];
  std::tie(status, body) =
      post("/v1/rerank", {{"model", "bert_reranker"}, {"query", query}, {"documents", passages}, {"truncate", true}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  for (const json& result : body["results"])
    EXPECT_NEAR(result["relevance_score"].get<double>(), sigmoid(scores[0][result["index"].get<std::size_t>()][0]),
                kScoreTolerance);
  std::tie(status, body) = post(
      "/rerank",
      {{"model", "bert_reranker"}, {"query", query}, {"texts", passages}, {"raw_scores", true}, {"truncate", true}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  for (const json& result : body)
    EXPECT_NEAR(result["score"].get<double>(), scores[0][result["index"].get<std::size_t>()][0].get<double>(),
                kScoreTolerance);
  expect_tei_error("/rerank", {{"query", query}, {"texts", passages}}, 424, "Backend", "cross-encoder");
}

TEST_F(MultiModelTest, AnUnknownModelOrOneThatIsNotAStringIsRefusedNamingIt) {
  serve_all({"bert_mean_dense_norm", "bert_reranker"});
  auto [status, body] = post("/v1/embeddings", {{"input", "a"}, {"model", "text-embedding-3-small"}});
  EXPECT_EQ(status, 400) << body;
  EXPECT_EQ(body["error"]["param"], "model");
  EXPECT_EQ(body["error"]["code"], "model_not_found");
  const std::string message = body["error"]["message"];
  EXPECT_NE(message.find("'text-embedding-3-small'"), std::string::npos) << message;
  EXPECT_NE(message.find("'bert_reranker'"), std::string::npos) << message;
  expect_tei_error("/embed", {{"inputs", "a"}, {"model", "nope"}}, 400, "Validation", "'nope'");
  expect_tei_error("/embed", {{"inputs", "a"}, {"model", 7}}, 400, "Validation", "'model'");
  std::tie(status, body) = post("/v1/rerank", {{"query", "q"}, {"documents", {"a"}}, {"model", json::array()}});
  EXPECT_EQ(status, 400) << body;
  EXPECT_EQ(body["error"]["param"], "model");
  EXPECT_EQ(get("/info?model=nope").first, 400);
}

TEST_F(MultiModelTest, InfoModelsAndMetricsArePerModel) {
  serve_all({"bert_mean_dense_norm", "bert_reranker", "distilbert_splade"});
  json info = json::parse(get("/info").second);
  EXPECT_EQ(info["model_id"], "bert_mean_dense_norm");
  EXPECT_EQ(info["models"], json::array({"bert_mean_dense_norm", "bert_reranker", "distilbert_splade"}));
  info = json::parse(get("/info?model=bert_reranker").second);
  EXPECT_EQ(info["model_id"], "bert_reranker");
  EXPECT_TRUE(info["model_type"].contains("reranker")) << info;
  const json listed = json::parse(get("/v1/models").second);
  EXPECT_EQ(listed["object"], "list");
  ASSERT_EQ(listed["data"].size(), 3u);
  EXPECT_EQ(listed["data"][2]["id"], "distilbert_splade");

  ASSERT_EQ(post("/embed", {{"inputs", {"a", "b"}}}).first, 200);
  ASSERT_EQ(post("/rerank", {{"model", "bert_reranker"}, {"query", "q"}, {"texts", {"a", "b", "c"}}}).first, 200);
  ASSERT_EQ(post("/embed_sparse", {{"model", "distilbert_splade"}, {"inputs", "a"}}).first, 200);
  const std::string text = get("/metrics").second;
  for (const auto& [name, inputs] : std::vector<std::pair<std::string, int>>{
           {"bert_mean_dense_norm", 2}, {"bert_reranker", 3}, {"distilbert_splade", 1}}) {
    EXPECT_NE(text.find("\naccel_serve_inputs_total{model=\"" + name + "\"} " + std::to_string(inputs) + "\n"),
              std::string::npos)
        << name << "\n"
        << text.substr(0, 2000);
    EXPECT_NE(text.find("\naccel_serve_ready{model=\"" + name + "\"} 1\n"), std::string::npos) << name;
    EXPECT_NE(text.find("\naccel_model_runs_total{model=\"" + name + "\"} "), std::string::npos) << name;
  }
  // The request counts too, by the model that answered; a request that named no model served has no model label.
  ASSERT_EQ(post("/embed", {{"inputs", "a"}, {"model", "nope"}}).first, 400);
  const std::vector<std::string> lines = {
      "accel_serve_requests_total{model=\"bert_mean_dense_norm\",endpoint=\"/embed\",status=\"200\"} 1",
      "accel_serve_requests_total{model=\"bert_reranker\",endpoint=\"/rerank\",status=\"200\"} 1",
      "accel_serve_requests_total{model=\"distilbert_splade\",endpoint=\"/embed_sparse\",status=\"200\"} 1",
      "accel_serve_requests_total{endpoint=\"/embed\",status=\"400\"} 1"};
  const std::string counted = metrics_with(lines);
  for (const std::string& line : lines)
    EXPECT_NE(counted.find("\n" + line + "\n"), std::string::npos) << line << "\n" << counted.substr(0, 1500);
  // Each read of the metrics counts too, once its response is written: read again until an earlier read shows.
  const std::string metrics_reads = "\naccel_serve_requests_total{endpoint=\"/metrics\",status=\"200\"} ";
  std::string reread = counted;
  for (int i = 0; i < 200 && reread.find(metrics_reads) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    reread = get("/metrics").second;
  }
  EXPECT_NE(reread.find(metrics_reads), std::string::npos);
  // Each family is announced once, its samples together (Prometheus' rule).
  std::size_t types = 0;
  for (std::size_t at = text.find("# TYPE accel_serve_inputs_total "); at != std::string::npos;
       at = text.find("# TYPE accel_serve_inputs_total ", at + 1))
    ++types;
  EXPECT_EQ(types, 1u);
}

TEST_F(MultiModelTest, ModelsBatchOnTheirOwnUnderConcurrentLoad) {
  ServeOptions options;
  options.batching.max_wait = std::chrono::milliseconds(20);
  serve_all({"bert_mean_dense_norm", "bert_reranker"}, options);
  const json texts = references().at("texts");
  const json& expected = references().at("models").at("bert_mean_dense_norm").at("embeddings");
  std::vector<std::future<std::pair<int, json>>> replies;
  for (std::size_t i = 0; i < 12; ++i)
    replies.push_back(std::async(std::launch::async, [this, i, &texts] {
      return i % 2 == 0 ? post("/embed", {{"inputs", texts[i]}, {"truncate", true}})
                        : post("/rerank",
                               {{"model", "bert_reranker"}, {"query", "q"}, {"texts", {texts[i]}}, {"truncate", true}});
    }));
  for (std::size_t i = 0; i < replies.size(); ++i) {
    auto [status, body] = replies[i].get();
    ASSERT_EQ(status, 200) << i << ": " << body.dump().substr(0, 300);
    if (i % 2 == 0) {
      EXPECT_GE(embed::testing::cosine(rows_of(body).row(0), expected[i].get<std::vector<double>>()), 0.99999);
    } else {
      Result<embed::Embeddings> direct = models_["bert_reranker"]->rerank("q", {texts[i].get<std::string>()}).wait();
      ASSERT_TRUE(direct.ok());
      EXPECT_NEAR(body[0]["score"].get<double>(), sigmoid(direct->values[0]), kScoreTolerance);
    }
  }
}

TEST_F(MultiModelTest, TwoModelsOfOneNameAreRefused) {
  EmbeddingServer server({.port = 0});
  Result<std::shared_ptr<embed::Model>> model =
      embed::Model::load(device_, {.folder = kFamilies / "bert_reranker", .batch_tokens = 512});
  ASSERT_TRUE(model.ok());
  Status attached = server.attach({{*model, device_, {}}, {*model, device_, {}}});
  EXPECT_EQ(attached.code(), Code::invalid_argument);
  EXPECT_NE(attached.message().find("'bert_reranker'"), std::string::npos) << attached.to_string();
  EXPECT_EQ(server.attach(std::vector<ServedModel>{}).code(), Code::invalid_argument);
}

}  // namespace
}  // namespace accel::serve

// --access-log over real HTTP on loopback, on the CPU device, with two tiny models: one JSON line per request
// answered, with its route, the model that answered it, its status, inputs and tokens (those run: the usage
// OpenAI's route answers) and stage times; requests that reached no model say so; a path no route owns is
// written as "other".
#include <gtest/gtest.h>
#include <algorithm>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/routes_fixture.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::serve {
namespace {

using embed::testing::kFamilies;

TEST_F(RoutesTest, TheAccessLogHasALinePerRequestWithItsModelTokensAndStages) {
  const testing::ScratchDirectory dir("access-log");
  const std::filesystem::path file = dir.path() / "access.jsonl";
  ServeOptions options{.port = 0, .access_log = file.string()};
  server_ = std::make_unique<EmbeddingServer>(options);
  Result<int> port = server_->start();
  ASSERT_TRUE(port.ok()) << port.status().to_string();
  port_ = *port;
  std::vector<ServedModel> served;
  for (const std::string name : {"bert_mean_dense_norm", "bert_reranker"}) {
    Result<std::shared_ptr<embed::Model>> model =
        embed::Model::load(device_, {.folder = kFamilies / name, .batch_tokens = 512});
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    served.push_back({*model, device_, {}, {}});
  }
  ASSERT_TRUE(server_->attach(std::move(served)).ok());

  auto [status, body] = post("/v1/embeddings", {{"input", {"hello world", "a cat"}}});
  ASSERT_EQ(status, 200) << body;
  const int usage = body["usage"]["prompt_tokens"];
  ASSERT_EQ(post("/rerank", {{"model", "bert_reranker"}, {"query", "q"}, {"texts", {"a", "b", "c"}}}).first, 200);
  ASSERT_EQ(post("/embed", {{"inputs", 3}}).first, 400);
  httplib::Client client("127.0.0.1", port_);
  ASSERT_TRUE(client.Get("/nowhere/secret"));
  ASSERT_TRUE(client.Get("/health"));
  server_->stop();  // every line is written once its response is

  std::ifstream in(file);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  ASSERT_EQ(lines.size(), 5u);
  // A line is written after its response is sent, so two requests' lines may land in either order: found by route.
  const auto line_of = [&](std::string_view route) -> const json& {
    const auto found = std::find_if(lines.begin(), lines.end(), [&](const json& l) { return l["route"] == route; });
    EXPECT_NE(found, lines.end()) << route;
    return found == lines.end() ? lines.front() : *found;
  };
  const json& embeddings = line_of("/v1/embeddings");
  EXPECT_EQ(embeddings["method"], "POST");
  EXPECT_EQ(embeddings["route"], "/v1/embeddings");
  EXPECT_EQ(embeddings["model"], "bert_mean_dense_norm");
  EXPECT_EQ(embeddings["status"], 200);
  EXPECT_EQ(embeddings["inputs"], 2);
  EXPECT_EQ(embeddings["tokens"], usage);
  EXPECT_TRUE(embeddings["time"].get<std::string>().ends_with("Z")) << embeddings;
  for (const char* stage : {"total", "queue", "tokenize", "compute", "serialize"})
    EXPECT_GE(embeddings["ms"][stage].get<double>(), 0.0) << stage;
  EXPECT_GT(embeddings["ms"]["compute"].get<double>(), 0.0);
  EXPECT_GE(embeddings["ms"]["total"].get<double>(), embeddings["ms"]["compute"].get<double>());

  const json& rerank = line_of("/rerank");
  EXPECT_EQ(rerank["model"], "bert_reranker");
  EXPECT_EQ(rerank["inputs"], 3);
  const json& refused = line_of("/embed");
  EXPECT_EQ(refused["status"], 400);
  EXPECT_EQ(refused["model"], "bert_mean_dense_norm");
  EXPECT_EQ(refused["tokens"], 0);
  const json& unknown = line_of("other");
  EXPECT_EQ(unknown["status"], 404);
  EXPECT_EQ(unknown["model"], "");
  EXPECT_EQ(line_of("/health")["status"], 200);
}

TEST_F(RoutesTest, AnAccessLogThatCannotBeOpenedStopsTheStartNamingIt) {
  EmbeddingServer server({.port = 0, .access_log = "/nonexistent-dir/access.jsonl"});
  Result<int> port = server.start();
  ASSERT_FALSE(port.ok());
  EXPECT_NE(port.status().message().find("/nonexistent-dir/access.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace accel::serve

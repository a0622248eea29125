// The server's default prompt (--default-prompt-name, --default-prompt) over real HTTP on loopback, on the CPU
// device: a request that names no prompt_name embeds as sentence-transformers does with that prompt
// (references.json), one that names a prompt keeps its own, neither falls back to the folder's default_prompt_name;
// usage counts the tokens really run (prompt included); /tokenize shows the prompt; /info says which applies; a
// default prompt name the model lacks is refused before serving.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/inference_steps.hpp"
#include "serve/routes_fixture.hpp"

namespace accel::serve {
namespace {

// Embeds `texts` through /embed, as rows.
embed::Embeddings embedded(const std::pair<int, json>& reply) {
  EXPECT_EQ(reply.first, 200) << reply.second.dump().substr(0, 300);
  return rows_of(reply.second);
}

TEST_F(RoutesTest, TheFoldersDefaultPromptAppliesWhenTheServerSetsNone) {
  serve("xlmr_weightedmean_prompts");  // default_prompt_name "query"
  const json& expected = references().at("models").at("xlmr_weightedmean_prompts");
  const json texts = references().at("texts");
  embed::testing::expect_dense(embedded(post("/embed", {{"inputs", texts}, {"truncate", true}})),
                               expected.at("embeddings"), {}, "folder default");
}

TEST_F(RoutesTest, TheServersDefaultPromptNameAppliesUnlessTheRequestNamesOne) {
  serve("xlmr_weightedmean_prompts", {.default_prompt_name = "passage"});
  const json& expected = references().at("models").at("xlmr_weightedmean_prompts");
  const json texts = references().at("texts");
  embed::testing::expect_dense(embedded(post("/embed", {{"inputs", texts}, {"truncate", true}})),
                               expected.at("embeddings_prompt_name=passage"), {}, "server default");
  embed::testing::expect_dense(
      embedded(post("/embed", {{"inputs", texts}, {"truncate", true}, {"prompt_name", "query"}})),
      expected.at("embeddings"), {}, "request's own");

  // usage: the tokens run, "passage: " included.
  const std::vector<std::string> some = {"hello world", "The quick brown fox"};
  auto [status, body] = post("/v1/embeddings", {{"input", some}});
  ASSERT_EQ(status, 200) << body;
  Result<embed::TokenBatch> passage = model_->tokenize(some, {.prompt_name = "passage"});
  Result<embed::TokenBatch> query = model_->tokenize(some, {.prompt_name = "query"});
  ASSERT_TRUE(passage.ok() && query.ok());
  ASSERT_NE(passage->ids.size(), query->ids.size()) << "the prompts must differ in length for this check";
  EXPECT_EQ(body["usage"]["prompt_tokens"], passage->ids.size());
  std::tie(status, body) = post("/v1/embeddings", {{"input", some}, {"prompt_name", "query"}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["usage"]["prompt_tokens"], query->ids.size());

  // /tokenize shows the prompt it put; /info says which applies.
  std::tie(status, body) = post("/tokenize", {{"inputs", "hello"}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body[0].size(),
            model_->tokenize(std::vector<std::string>{"hello"}, {.prompt_name = "passage"})->ids.size());
  httplib::Client client("127.0.0.1", port_);
  httplib::Result info = client.Get("/info");
  ASSERT_TRUE(info);
  EXPECT_EQ(json::parse(info->body)["server_default_prompt_name"], "passage");
}

TEST_F(RoutesTest, TheServersDefaultPromptTextAppliesUnlessTheRequestNamesOne) {
  ServeOptions options;
  options.default_prompt = "query: ";
  serve("bert_mean_dense_norm", options);  // no default of its own
  const json& expected = references().at("models").at("bert_mean_dense_norm");
  const json texts = references().at("texts");
  embed::testing::expect_dense(embedded(post("/embed", {{"inputs", texts}, {"truncate", true}})),
                               expected.at("embeddings_prompt_name=query"), {}, "server default text");
  embed::testing::expect_dense(
      embedded(post("/embed", {{"inputs", texts}, {"truncate", true}, {"prompt_name", "document"}})),
      expected.at("embeddings"), {}, "request's own (the empty document prompt)");
}

TEST_F(RoutesTest, ADefaultPromptNameTheModelLacksIsRefusedNamingTheOption) {
  serve("bert_mean_dense_norm");
  Status checked = check_default_prompt({.default_prompt_name = "nope"}, model_->info());
  EXPECT_EQ(checked.code(), Code::invalid_argument);
  EXPECT_NE(checked.message().find("--default-prompt-name 'nope'"), std::string::npos) << checked.to_string();
  EXPECT_NE(checked.message().find("'query'"), std::string::npos) << checked.to_string();
  EXPECT_TRUE(check_default_prompt({.default_prompt_name = "query"}, model_->info()).ok());
  serve("bert_reranker");  // a cross-encoder takes no prompt: nothing to check
  EXPECT_TRUE(check_default_prompt({.default_prompt_name = "nope"}, model_->info()).ok());
}

}  // namespace
}  // namespace accel::serve

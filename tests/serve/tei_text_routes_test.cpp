// TEI's routes beyond /embed over real HTTP on loopback, on the CPU device: /similarity against the cosine of
// sentence-transformers' embeddings (references.json), then each route's refusals naming the field at fault.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/routes_fixture.hpp"

namespace accel::serve {
namespace {

// Cosine similarity of two reference rows.
double reference_cosine(const json& a, const json& b) {
  const auto x = a.get<std::vector<double>>(), y = b.get<std::vector<double>>();
  double dot = 0, nx = 0, ny = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    dot += x[i] * y[i];
    nx += x[i] * x[i];
    ny += y[i] * y[i];
  }
  return dot / std::sqrt(nx * ny);
}

TEST_F(RoutesTest, SimilarityIsTheCosineOfTheSourceWithEachSentence) {
  serve("bert_bare");  // rows not unit length: the route must normalise, not take dot products
  const json& expected = references().at("models").at("bert_bare").at("embeddings");
  const json texts = references().at("texts");
  json sentences = json::array();
  for (std::size_t i = 1; i < texts.size(); ++i) sentences.push_back(texts[i]);
  auto [status, body] = post("/similarity", {{"inputs", {{"source_sentence", texts[0]}, {"sentences", sentences}}},
                                             {"parameters", {{"truncate", true}}}});
  ASSERT_EQ(status, 200) << body.dump().substr(0, 300);
  ASSERT_EQ(body.size(), sentences.size());
  for (std::size_t i = 0; i < body.size(); ++i)
    EXPECT_NEAR(body[i].get<double>(), reference_cosine(expected[0], expected[i + 1]), 1e-4) << "sentence " << i;

  // TEI's published example: parameters absent.
  std::tie(status, body) = post("/similarity", json::parse(R"({"inputs": {"source_sentence": "What is Deep Learning?",
                                                           "sentences": ["What is Machine Learning?"]}})"));
  ASSERT_EQ(status, 200) << body;
  ASSERT_EQ(body.size(), 1u);
  EXPECT_LE(std::abs(body[0].get<double>()), 1.0 + 1e-6);
}

TEST_F(RoutesTest, SimilarityRefusesEachWrongFieldByName) {
  serve("bert_mean_dense_norm");
  expect_tei_error("/similarity", {{"inputs", "a"}}, 400, "Validation", "'inputs'");
  expect_tei_error("/similarity", {{"inputs", {{"sentences", {"a"}}}}}, 400, "Validation", "source_sentence");
  expect_tei_error("/similarity", {{"inputs", {{"source_sentence", 1}, {"sentences", {"a"}}}}}, 400, "Validation",
                   "source_sentence");
  expect_tei_error("/similarity", {{"inputs", {{"source_sentence", "a"}}}}, 400, "Validation", "sentences");
  expect_tei_error("/similarity", {{"inputs", {{"source_sentence", "a"}, {"sentences", json::array()}}}}, 400,
                   "Validation", "sentences");
  expect_tei_error("/similarity", {{"inputs", {{"source_sentence", "a"}, {"sentences", {"b", 2}}}}}, 400, "Validation",
                   "sentences[1]");
  const json inputs = {{"source_sentence", "a"}, {"sentences", {"b"}}};
  expect_tei_error("/similarity", {{"inputs", inputs}, {"parameters", 3}}, 400, "Validation", "'parameters'");
  expect_tei_error("/similarity", {{"inputs", inputs}, {"parameters", {{"truncate", "yes"}}}}, 400, "Validation",
                   "'truncate'");
  expect_tei_error("/similarity", {{"inputs", inputs}, {"parameters", {{"prompt_name", "nope"}}}}, 400, "Validation",
                   "prompt_name");
  std::string long_text;
  for (int i = 0; i < 600; ++i) long_text += "word ";
  expect_tei_error("/similarity", {{"inputs", {{"source_sentence", long_text}, {"sentences", {"b"}}}}}, 413,
                   "Validation", "max_sequence_length");
  serve("bert_reranker");
  auto [status, body] = post("/similarity", {{"inputs", inputs}});
  EXPECT_EQ(status, 424) << body;
}

}  // namespace
}  // namespace accel::serve

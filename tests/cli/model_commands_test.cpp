// The model commands beside `accel embed`'s dense path, run as a program on the committed tiny models
// (tests/embed/data/families): `accel rerank` against transformers' scores, `accel embed` of a SPLADE model (sparse
// JSONL) and with --prompt-name, --dimensions and --truncate, `accel info --model`, and `accel serve` refusing a
// model that is not a dense embedder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "embed/family_references.hpp"
#include "testing/run_cli.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::embed {
namespace {

using accel::testing::run_cli;
using ::testing::HasSubstr;
using testing::kFamilies;
using testing::references;

std::vector<nlohmann::json> lines(const std::string& out) {
  std::vector<nlohmann::json> parsed;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) parsed.push_back(nlohmann::json::parse(line, nullptr, false));
  return parsed;
}

class ModelCommandsTest : public ::testing::Test {
 protected:
  // The texts, one per line: those of the references without a line break of their own.
  std::string write_lines(const std::vector<std::string>& texts, std::vector<std::size_t>& kept) {
    std::string contents;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (texts[i].find_first_of("\r\n\x0b\x0c\u0085") != std::string::npos || texts[i].empty()) continue;
      bool plain = true;
      for (unsigned char c : texts[i]) plain = plain && c >= 0x20;
      if (!plain) continue;
      contents += texts[i] + "\n";
      kept.push_back(i);
    }
    const std::filesystem::path path = dir_.path() / "in.txt";
    std::ofstream(path, std::ios::binary) << contents;
    return path.string();
  }
  accel::testing::ScratchDirectory dir_{"model_commands_test"};
};

TEST_F(ModelCommandsTest, RerankPrintsEachPassagesScore) {
  std::vector<std::size_t> kept;
  const std::string input = write_lines(testing::strings(references().at("passages")), kept);
  const auto& logits = references().at("models").at("bert_reranker").at("scores")[0];
  const auto ran = run_cli("rerank --device cpu --model " + (kFamilies / "bert_reranker").string() + " '" +
                           references().at("queries")[0].get<std::string>() + "' " + input);
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  const auto got = lines(ran.out);
  ASSERT_EQ(got.size(), kept.size()) << ran.out;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const double logit = logits[kept[k]][0].get<double>();
    EXPECT_NEAR(got[k].at("logit").get<double>(), logit, 1e-3) << k;
    EXPECT_NEAR(got[k].at("score").get<double>(), 1.0 / (1.0 + std::exp(-logit)), 1e-3) << k;
  }
  const auto refused =
      run_cli("rerank --device cpu --model " + (kFamilies / "bert_cls_old_format").string() + " q " + input);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.out, HasSubstr("is not a cross-encoder"));
}

TEST_F(ModelCommandsTest, EmbedPrintsSparseVectorsOfASpladeModel) {
  std::vector<std::size_t> kept;
  const std::string input = write_lines(testing::strings(references().at("splade_texts")), kept);
  const auto ran = run_cli("embed --device cpu --model " + (kFamilies / "distilbert_splade").string() + " " + input);
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  const auto got = lines(ran.out);
  ASSERT_EQ(got.size(), kept.size());
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const auto& expected = references().at("models").at("distilbert_splade").at("sparse")[kept[k]];
    EXPECT_EQ(got[k].at("sparse").at("indices"), expected.at("indices")) << k;
    const auto values = got[k].at("sparse").at("values").get<std::vector<double>>();
    const auto want = expected.at("values").get<std::vector<double>>();
    ASSERT_EQ(values.size(), want.size());
    for (std::size_t v = 0; v < want.size(); ++v) EXPECT_NEAR(values[v], want[v], 1e-3);
  }
  const auto npy = run_cli("embed --device cpu --model " + (kFamilies / "distilbert_splade").string() + " -o " +
                           (dir_.path() / "out.npy").string() + " " + input);
  EXPECT_EQ(npy.exit_code, 1);
  EXPECT_THAT(npy.out, HasSubstr(".npy holds dense embeddings"));
}

TEST_F(ModelCommandsTest, EmbedTakesPromptNamesDimensionsAndTruncation) {
  std::vector<std::size_t> kept;
  const std::string input = write_lines(testing::strings(references().at("texts")), kept);
  const std::string model = (kFamilies / "bert_mean_dense_norm").string();
  const auto ran = run_cli("embed --device cpu --prompt-name query --dimensions 8 --model " + model + " " + input);
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  const auto got = lines(ran.out);
  ASSERT_EQ(got.size(), kept.size());
  const auto& full = references().at("models").at("bert_mean_dense_norm").at("embeddings_prompt_name=query");
  for (std::size_t k = 0; k < kept.size(); ++k) {
    auto first = full[kept[k]].get<std::vector<double>>();
    first.resize(8);
    const auto row = got[k].at("embedding").get<std::vector<float>>();
    ASSERT_EQ(row.size(), 8u);
    EXPECT_GE(testing::cosine(row, first), 0.99999) << k;
  }
  const auto too_many = run_cli("embed --device cpu --dimensions 17 --model " + model + " " + input);
  EXPECT_EQ(too_many.exit_code, 1);
  EXPECT_THAT(too_many.out, HasSubstr("dimensions 17 is more than the model's 16"));
  const auto refused = run_cli("embed --device cpu --truncate refuse --model " + model + " " + input);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.out, HasSubstr("longer than the model's 48 tokens"));
  const auto unknown = run_cli("embed --device cpu --prompt-name nope --model " + model + " " + input);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.out, HasSubstr("prompt name 'nope'"));
}

TEST_F(ModelCommandsTest, InfoSaysWhatLoadsFromAFolder) {
  const auto ran = run_cli("info --model " + (kFamilies / "xlmr_weightedmean_prompts").string());
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  EXPECT_THAT(ran.out, HasSubstr("family: RoBERTa (model_type xlm-roberta), 2 layers, hidden 32"));
  EXPECT_THAT(ran.out, HasSubstr("output: dense, 32 dimensions: weighted_mean pooling, normalised"));
  EXPECT_THAT(ran.out, HasSubstr("max sequence length: 48 tokens"));
  EXPECT_THAT(ran.out, HasSubstr("model=Unigram"));
  EXPECT_THAT(ran.out, HasSubstr("prompt query (default): \"query: \""));
  const auto broken = run_cli("info --model " + dir_.path().string());
  EXPECT_EQ(broken.exit_code, 3);
}

TEST_F(ModelCommandsTest, ServeServesSpladeAndCrossEncoderModelsSayingWhichRoutesFit) {
  struct Case {
    std::string name;
    std::string routes;
  };
  for (const Case& c : {Case{"distilbert_splade", "/embed_sparse, /tokenize and /info fit it"},
                        Case{"bert_reranker", "/rerank, /predict, /tokenize and /info fit it"}}) {
    // The server runs until a signal: it is stopped (SIGTERM) once ready, and must then exit 0.
    const std::string log = (dir_.path() / (c.name + ".log")).string();
    const auto ran =
        run_cli("serve --device cpu --port 0 --model " + (kFamilies / c.name).string() + " >" + log +
                " 2>&1 & server=$!; for i in $(seq 600); do grep -q 'ready:' " + log +
                " && break; sleep 0.1; done; kill -TERM $server; wait $server; code=$?; cat " + log + "; exit $code");
    EXPECT_EQ(ran.exit_code, 0) << ran.out;
    EXPECT_THAT(ran.out, HasSubstr(c.routes)) << c.name;
    EXPECT_THAT(ran.out, HasSubstr("ready: " + c.name)) << c.name;
  }
}

TEST_F(ModelCommandsTest, ServeRefusesADefaultPromptNameTheModelLacksBeforeServing) {
  const std::string model = (kFamilies / "bert_mean_dense_norm").string();
  const auto lacking = run_cli("serve --device cpu --port 0 --model " + model + " --default-prompt-name nope");
  EXPECT_EQ(lacking.exit_code, 1) << lacking.out;
  EXPECT_THAT(lacking.out, HasSubstr("--default-prompt-name 'nope'"));
  EXPECT_THAT(lacking.out, HasSubstr("'query'"));
  const auto both =
      run_cli("serve --device cpu --port 0 --model " + model + " --default-prompt-name query --default-prompt 'q: '");
  EXPECT_NE(both.exit_code, 0) << both.out;
  EXPECT_THAT(both.out, HasSubstr("excludes"));
}

TEST_F(ModelCommandsTest, ServeServesSeveralModelsAndRefusesTwoOfOneName) {
  const std::string embedder = (kFamilies / "bert_mean_dense_norm").string();
  const std::string reranker = (kFamilies / "bert_reranker").string();
  const std::string log = (dir_.path() / "two.log").string();
  const auto two =
      run_cli("serve --device cpu --port 0 --model " + embedder + " --model " + reranker + " >" + log +
              " 2>&1 & server=$!; for i in $(seq 600); do grep -q 'ready:' " + log +
              " && break; sleep 0.1; done; kill -TERM $server; wait $server; code=$?; cat " + log + "; exit $code");
  EXPECT_EQ(two.exit_code, 0) << two.out;
  EXPECT_THAT(two.out, HasSubstr("ready: bert_mean_dense_norm, bert_reranker"));
  const auto same = run_cli("serve --device cpu --port 0 --model " + embedder + " --model " + embedder);
  EXPECT_EQ(same.exit_code, 1) << same.out;
  EXPECT_THAT(same.out, HasSubstr("two models are named 'bert_mean_dense_norm'"));
}

}  // namespace
}  // namespace accel::embed

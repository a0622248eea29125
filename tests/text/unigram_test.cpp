// The Unigram model against HuggingFace tokenizers 0.23.3: hand-made models loaded from the same JSON in Python
// (tests/text/make_token_model_golden.py cases), and the 250,002 pieces of XLM-R (multilingual-e5-small) on words
// of many scripts (tests/text/data/xlmr_unigram_golden.jsonl).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "text/token_model_testing.hpp"
#include "text/tokenizer/components.hpp"

namespace accel::text {
namespace {

using nlohmann::json;
using testing::Case;
using testing::expect_refused;
using testing::expect_tokens;
using testing::kRemoved;
using testing::load_model;
using testing::load_model_object;
using testing::with_field;

// Expected tokens: tokenizers 0.23.3 (tests/text/make_token_model_golden.py cases).
constexpr std::string_view kUnigramModel = R"json({"type": "Unigram", "unk_id": 0,
    "vocab": [["<unk>", 0.0], ["a", -1.0], ["b", -2.0], ["ab", -2.5], ["c", -3.0], ["abc", -6.0], ["▁", -1.0],
    ["▁a", -1.5], ["é", -2.0], ["d", -1.0], ["e", -1.0], ["de", -2.0]]})json";
const std::vector<Case> UnigramCases = {
    {"abc", {{3, "ab", 0, 2}, {4, "c", 2, 3}}},
    {"ab", {{3, "ab", 0, 2}}},
    {"abcab", {{3, "ab", 0, 2}, {4, "c", 2, 3}, {3, "ab", 3, 5}}},
    {"x", {{0, "x", 0, 1}}},
    {"xxab", {{0, "xx", 0, 2}, {3, "ab", 2, 4}}},
    {"axxé", {{1, "a", 0, 1}, {0, "xx", 1, 3}, {8, "é", 3, 5}}},
    {"<unk>", {{0, "<unk>", 0, 5}}},
    {"▁abc", {{6, "▁", 0, 3}, {3, "ab", 3, 5}, {4, "c", 5, 6}}},
    {"a<unk>b", {{1, "a", 0, 1}, {0, "<unk>", 1, 6}, {2, "b", 6, 7}}},
    {"de", {{11, "de", 0, 2}}},
    {"dede", {{11, "de", 0, 2}, {11, "de", 2, 4}}},
    {"▁", {{6, "▁", 0, 3}}},
    {"日本語", {{0, "日本語", 0, 9}}},
    {"e\u0301", {{10, "e", 0, 1}, {0, "\u0301", 1, 3}}},
};

constexpr std::string_view kUnigramByteFallbackModel = R"json({"type": "Unigram", "unk_id": 0,
    "byte_fallback": true, "vocab": [["<unk>", 0.0], ["<0xC3>", -5.0], ["<0xA9>", -5.0], ["a", -1.0],
    ["<0xF0>", -5.0], ["<0x9F>", -5.0], ["<0x98>", -5.0]]})json";
const std::vector<Case> UnigramByteFallbackCases = {
    {"é", {{1, "<0xC3>", 0, 2}, {2, "<0xA9>", 0, 2}}},
    {"aéa", {{3, "a", 0, 1}, {1, "<0xC3>", 1, 3}, {2, "<0xA9>", 1, 3}, {3, "a", 3, 4}}},
    {"😀", {{0, "😀", 0, 4}}},
    {"éé", {{1, "<0xC3>", 0, 4}, {2, "<0xA9>", 0, 4}, {1, "<0xC3>", 0, 4}, {2, "<0xA9>", 0, 4}}},
    {"é😀", {{0, "é😀", 0, 6}}},
};

constexpr std::string_view kUnigramDuplicateModel = R"json({"unk_id": 0, "vocab": [["<unk>", 0.0],
    ["a", -1.0], ["a", -5.0], ["aa", -1.5]]})json";
const std::vector<Case> UnigramDuplicateCases = {
    {"a", {{2, "a", 0, 1}}},
    {"aaa", {{2, "a", 0, 1}, {3, "aa", 1, 3}}},
};

constexpr std::string_view kUnigramUnkPieceModel = R"json({"type": "Unigram", "unk_id": 0,
    "vocab": [["x", 0.0], ["a", -1.0]]})json";
const std::vector<Case> UnigramUnkPieceCases = {
    {"xa", {{0, "x", 0, 1}, {1, "a", 1, 2}}},
    {"yx", {{0, "yx", 0, 2}}},
    {"yya", {{0, "yy", 0, 2}, {1, "a", 2, 3}}},
    {"ay", {{1, "a", 0, 1}, {0, "y", 1, 2}}},
};

// Unknown code points score 10 below the lowest piece and fuse into one token whose value is their text; ties keep
// the path found first ("de").
TEST(UnigramTest, TokensMatchTokenizers) { expect_tokens(kUnigramModel, UnigramCases); }

// Each byte piece of a fused unknown run carries the whole run's offsets, as in tokenizers.
TEST(UnigramTest, ByteFallbackMatchesTokenizers) { expect_tokens(kUnigramByteFallbackModel, UnigramByteFallbackCases); }

// Of equal pieces the last one's id and score count; no "type" here.
TEST(UnigramTest, DuplicatePiecesMatchTokenizers) { expect_tokens(kUnigramDuplicateModel, UnigramDuplicateCases); }

// The unknown piece is a real piece ("x") that fuses with unknown code points next to it.
TEST(UnigramTest, UnknownPieceInTheTextMatchesTokenizers) {
  expect_tokens(kUnigramUnkPieceModel, UnigramUnkPieceCases);
}

TEST(UnigramTest, LooksUpIdsBothWays) {
  const auto model = load_model(kUnigramDuplicateModel);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->vocabulary_size(), 4u);
  EXPECT_EQ(model->token_to_id("a"), 2);
  EXPECT_EQ(model->token_to_id("b"), std::nullopt);
  EXPECT_EQ(model->id_to_token(1), "a");
  EXPECT_EQ(model->id_to_token(4), std::nullopt);
  EXPECT_EQ(model->id_to_token(-1), std::nullopt);
}

TEST(UnigramTest, RefusesMalformedFields) {
  expect_refused(with_field(kUnigramModel, "vocab", kRemoved), "model.vocab is missing");
  expect_refused(with_field(kUnigramModel, "vocab", json::array()), "model.vocab is []; expected a non-empty array");
  expect_refused(with_field(kUnigramModel, "vocab", {{"a", -1.0}}), "model.vocab is {\"a\":-1.0}");
  expect_refused(with_field(kUnigramModel, "vocab", json::array({json::array({"<unk>", 0.0}), "a"})),
                 "model.vocab[1] is \"a\"; expected a [piece, score] pair with a finite score");
  expect_refused(with_field(kUnigramModel, "vocab", json::array({json::array({"<unk>", 0.0}), json::array({"a"})})),
                 "model.vocab[1] is [\"a\"]");
  expect_refused(with_field(kUnigramModel, "vocab", json::array({json::array({7, 0.0})})), "model.vocab[0] is [7,0.0]");
  expect_refused(with_field(kUnigramModel, "vocab", json::array({json::array({"<unk>", "0"})})),
                 "model.vocab[0] is [\"<unk>\",\"0\"]");
  expect_refused(with_field(kUnigramModel, "vocab",
                            json::array({json::array({"<unk>", std::numeric_limits<double>::infinity()})})),
                 "model.vocab[0] is [\"<unk>\",null]");  // how nlohmann shows infinity
  expect_refused(with_field(kUnigramModel, "vocab", json::array({json::array({"<unk>", 0.0, 1.0})})),
                 "model.vocab[0] is");
  expect_refused(with_field(kUnigramModel, "unk_id", kRemoved), "model.unk_id is missing or null");
  expect_refused(with_field(kUnigramModel, "unk_id", nullptr), "model.unk_id is missing or null");
  expect_refused(with_field(kUnigramModel, "unk_id", 12), "model.unk_id is 12; expected an integer from 0 to 11");
  expect_refused(with_field(kUnigramModel, "unk_id", -1), "model.unk_id is -1");
  expect_refused(with_field(kUnigramModel, "unk_id", 0.5), "model.unk_id is 0.5");
  expect_refused(with_field(kUnigramModel, "unk_id", 1e30), "model.unk_id is 1e+30");
  expect_refused(with_field(kUnigramModel, "byte_fallback", "true"), "model.byte_fallback is \"true\"");
}

// The XLM-R vocabulary of multilingual-e5-small: 250,002 pieces, against tokenizers on words as the Metaspace
// pre-tokenizer hands them over ("▁" first).
class XlmrUnigramTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::ifstream file(ACCEL_TEST_XLMR_TOKENIZER);
    if (!file) return;
    const json document = json::parse(file);
    const auto start = std::chrono::steady_clock::now();
    auto made = make_token_model(document.at("model"), "model");
    load_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(made.ok()) << made.status().to_string();
    model_ = std::move(*made).release();
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  void SetUp() override {
    if (model_ == nullptr) GTEST_SKIP() << ACCEL_TEST_XLMR_TOKENIZER << " is absent (scripts/setup fetches it)";
  }

  static std::vector<Case> golden() {
    std::vector<Case> cases;
    std::ifstream file(std::string(ACCEL_TEST_DATA) + "/xlmr_unigram_golden.jsonl");
    for (std::string line; std::getline(file, line);) {
      const json entry = json::parse(line);
      Case expected{entry.at("word").get<std::string>(), {}};
      for (std::size_t i = 0; i < entry.at("ids").size(); ++i) {
        expected.tokens.push_back({entry["ids"][i].get<std::int32_t>(), entry["values"][i].get<std::string>(),
                                   entry["offsets"][i][0].get<std::size_t>(),
                                   entry["offsets"][i][1].get<std::size_t>()});
      }
      cases.push_back(std::move(expected));
    }
    return cases;
  }

  static inline TokenModel* model_ = nullptr;
  static inline double load_seconds_ = 0.0;
};

TEST_F(XlmrUnigramTest, TokensMatchTokenizers) {
  const std::vector<Case> cases = golden();
  ASSERT_GE(cases.size(), 200u);
  for (const Case& expected : cases) testing::expect_tokens(*model_, expected);
  RecordProperty("load_seconds", std::to_string(load_seconds_));
}

TEST_F(XlmrUnigramTest, LooksUpIdsBothWays) {
  EXPECT_EQ(model_->vocabulary_size(), 250002u);
  EXPECT_EQ(model_->id_to_token(3), "<unk>");
  EXPECT_EQ(model_->id_to_token(6), "▁");
  EXPECT_EQ(model_->token_to_id("<s>"), 0);
  EXPECT_EQ(model_->token_to_id("▁"), 6);
}

TEST_F(XlmrUnigramTest, ThreadsTokenizeTheSameModelAtOnce) {
  const std::vector<Case> cases = golden();
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        for (const Case& expected : cases) {
          std::vector<Token> tokens;
          model_->tokenize(expected.word, tokens);
          bool same = tokens.size() == expected.tokens.size();
          for (std::size_t i = 0; same && i < tokens.size(); ++i) same = tokens[i].id == expected.tokens[i].id;
          mismatches[t] += same ? 0 : 1;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(mismatches.size(), 0));
}

}  // namespace
}  // namespace accel::text

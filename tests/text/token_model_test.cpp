// The WordPiece model and make_token_model's dispatch, against HuggingFace tokenizers 0.23.3: each model loaded
// from the same JSON in Python, expected tokens (ids, values, byte offsets) from model.tokenize(word)
// (tests/text/make_token_model_golden.py cases).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "text/token_model_testing.hpp"
#include "text/tokenizer/components.hpp"
#include "text/tokenizer/piece_table.hpp"

namespace accel::text {
namespace {

using nlohmann::json;
using testing::Case;
using testing::expect_refused;
using testing::expect_tokens;
using testing::kRemoved;
using testing::load_model;
using testing::with_field;

// Expected tokens: tokenizers 0.23.3 (tests/text/make_token_model_golden.py cases).
constexpr std::string_view kWordPieceModel = R"json({"type": "WordPiece", "unk_token": "[UNK]",
    "continuing_subword_prefix": "##", "max_input_chars_per_word": 8, "vocab": {"[UNK]": 0, "un": 1,
    "##aff": 2, "##able": 3, "a": 4, "##b": 5, "é": 6, "##é": 7, "日本": 8, "##語": 9, "😀": 10, "##😀": 11,
    "e": 12, "##\u0301": 13, "##": 14, "#": 15, "##a": 16}})json";
const std::vector<Case> WordPieceCases = {
    {"unaffable", {{0, "[UNK]", 0, 9}}},
    {"unaff", {{1, "un", 0, 2}, {2, "##aff", 2, 5}}},
    {"ab", {{4, "a", 0, 1}, {5, "##b", 1, 2}}},
    {"abé", {{4, "a", 0, 1}, {5, "##b", 1, 2}, {7, "##é", 2, 4}}},
    {"aé", {{4, "a", 0, 1}, {7, "##é", 1, 3}}},
    {"日本語", {{8, "日本", 0, 6}, {9, "##語", 6, 9}}},
    {"😀😀", {{10, "😀", 0, 4}, {11, "##😀", 4, 8}}},
    {"e\u0301", {{12, "e", 0, 1}, {13, "##\u0301", 1, 3}}},
    {"zzz", {{0, "[UNK]", 0, 3}}},
    {"a", {{4, "a", 0, 1}}},
    {"é", {{6, "é", 0, 2}}},
    {"##", {{14, "##", 0, 2}}},
    {"###", {{0, "[UNK]", 0, 3}}},
    {"b", {{0, "[UNK]", 0, 1}}},
    {"aaaaaaaa",
     {{4, "a", 0, 1},
      {16, "##a", 1, 2},
      {16, "##a", 2, 3},
      {16, "##a", 3, 4},
      {16, "##a", 4, 5},
      {16, "##a", 5, 6},
      {16, "##a", 6, 7},
      {16, "##a", 7, 8}}},
    {"aaaaaaaaa", {{0, "[UNK]", 0, 9}}},
    {"ab😀x", {{0, "[UNK]", 0, 7}}},
};

constexpr std::string_view kWordPieceNoPrefixModel = R"json({"unk_token": "<unk>",
    "continuing_subword_prefix": "", "max_input_chars_per_word": 100, "vocab": {"<unk>": 0, "ab": 1, "a": 2,
    "b": 3, "c": 4, "abc": 5, "ñ": 6}})json";
const std::vector<Case> WordPieceNoPrefixCases = {
    {"abcab", {{5, "abc", 0, 3}, {1, "ab", 3, 5}}},
    {"cba", {{4, "c", 0, 1}, {3, "b", 1, 2}, {2, "a", 2, 3}}},
    {"abd", {{0, "<unk>", 0, 3}}},
    {"ñañ", {{6, "ñ", 0, 2}, {2, "a", 2, 3}, {6, "ñ", 3, 5}}},
    {"ñ", {{6, "ñ", 0, 2}}},
};

TEST(WordPieceTest, TokensMatchTokenizers) { expect_tokens(kWordPieceModel, WordPieceCases); }

// Without "type" (and with an empty prefix, so that every entry continues a word too).
TEST(WordPieceTest, UntaggedModelWithoutPrefixMatchesTokenizers) {
  expect_tokens(kWordPieceNoPrefixModel, WordPieceNoPrefixCases);
}

TEST(WordPieceTest, LooksUpIdsBothWays) {
  const auto model = load_model(R"({"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
      "max_input_chars_per_word": 100, "vocab": {"[UNK]": 7, "a": 2, "##b": 3}})");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->vocabulary_size(), 8u);  // ids 0, 1, 4, 5, 6 are holes
  EXPECT_EQ(model->token_to_id("##b"), 3);
  EXPECT_EQ(model->token_to_id("b"), std::nullopt);
  EXPECT_EQ(model->id_to_token(7), "[UNK]");
  EXPECT_EQ(model->id_to_token(4), std::nullopt);
  EXPECT_EQ(model->id_to_token(-1), std::nullopt);
  EXPECT_EQ(model->id_to_token(std::numeric_limits<std::int32_t>::max()), std::nullopt);
}

TEST(WordPieceTest, RefusesMalformedFields) {
  expect_refused(with_field(kWordPieceModel, "vocab", kRemoved), "model.vocab is missing");
  expect_refused(with_field(kWordPieceModel, "vocab", json::array({"a"})), "model.vocab is [\"a\"]");
  expect_refused(with_field(kWordPieceModel, "vocab", json::object()), "model.vocab is {}");
  expect_refused(with_field(kWordPieceModel, "vocab", {{"[UNK]", 0}, {"a", -1}}), "model.vocab.a is -1");
  expect_refused(with_field(kWordPieceModel, "vocab", {{"[UNK]", 0}, {"a", 2147483648LL}}),
                 "model.vocab.a is 2147483648");
  expect_refused(with_field(kWordPieceModel, "vocab", {{"[UNK]", 0}, {"a", 1.5}}), "model.vocab.a is 1.5");
  expect_refused(with_field(kWordPieceModel, "vocab", {{"[UNK]", 0}, {"a", "1"}}), "model.vocab.a is \"1\"");
  expect_refused(with_field(kWordPieceModel, "vocab", {{"[UNK]", 0}, {"a", 1}, {"b", 1}}),
                 "model.vocab.b is 1; the id is also given to \"a\"");
  expect_refused(with_field(kWordPieceModel, "unk_token", kRemoved), "model.unk_token is missing");
  expect_refused(with_field(kWordPieceModel, "unk_token", 3), "model.unk_token is 3");
  expect_refused(with_field(kWordPieceModel, "unk_token", "<unk>"),
                 "model.unk_token is \"<unk>\"; the unknown token is not in the vocabulary");
  expect_refused(with_field(kWordPieceModel, "continuing_subword_prefix", kRemoved),
                 "model.continuing_subword_prefix is missing");
  expect_refused(with_field(kWordPieceModel, "continuing_subword_prefix", nullptr),
                 "model.continuing_subword_prefix is null");
  expect_refused(with_field(kWordPieceModel, "max_input_chars_per_word", -1), "model.max_input_chars_per_word is -1");
  expect_refused(with_field(kWordPieceModel, "max_input_chars_per_word", "100"),
                 "model.max_input_chars_per_word is \"100\"");
}

TEST(TokenModelTest, DispatchesOnType) {
  const auto unigram = load_model(R"({"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]})");
  ASSERT_NE(unigram, nullptr);
  EXPECT_EQ(unigram->vocabulary_size(), 1u);
  const auto bpe = load_model(R"({"type": "BPE", "vocab": {"a": 0}, "merges": []})");
  ASSERT_NE(bpe, nullptr);
  EXPECT_EQ(bpe->token_to_id("a"), 0);
}

TEST(TokenModelTest, RefusesWhatItDoesNotRun) {
  expect_refused(json::array(), "model is []; expected an object");
  expect_refused(json{{"type", "WordLevel"}, {"vocab", {{"a", 0}}}, {"unk_token", "a"}},
                 "model.type is \"WordLevel\"; model WordLevel is not supported (we run: WordPiece, BPE, Unigram)");
  expect_refused(json{{"type", "Magic"}}, "model Magic is not supported");
  expect_refused(json{{"type", 1}, {"vocab", {{"a", 0}}}}, "model.type is 1");
  expect_refused(json{{"type", nullptr}, {"vocab", {{"a", 0}}}}, "model.type is null");
  // Without "type", the fields decide as tokenizers' untagged reading does.
  expect_refused(json{{"vocab", {{"a", 0}}}, {"unk_token", "a"}}, "model WordLevel is not supported");
  expect_refused(json{{"unk_id", 0}}, "model.vocab is missing");
  expect_refused(json{{"vocab", 3}}, "model is {\"vocab\":3}; a model without \"type\" must have the fields");
}

// The vocabularies' table: every piece found with its index, each absent key (prefixes of present ones, the empty
// string, keys viewed from other storage) missed, the first of two equal keys kept, across the table's growth.
TEST(PieceIndexTest, FindsEveryPieceMissesTheRestAndKeepsTheFirstOfEqualKeys) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> length(1, 12), letter('a', 'h');
  std::vector<std::string> pieces(5000);
  for (std::string& piece : pieces)
    for (int i = length(rng); i > 0; --i) piece += static_cast<char>(letter(rng));
  PieceIndex index;
  for (std::uint32_t i = 0; i < pieces.size(); ++i) index.emplace(pieces[i], i);
  std::unordered_set<std::string> present;
  for (std::uint32_t i = 0; i < pieces.size(); ++i) {
    const bool first = present.insert(pieces[i]).second;
    const std::string copy = pieces[i];  // equal bytes elsewhere
    const std::optional<std::uint32_t> found = index.find(copy);
    ASSERT_TRUE(found.has_value()) << pieces[i];
    if (first) {
      EXPECT_EQ(*found, i) << pieces[i];
    }
    EXPECT_EQ(pieces[*found], pieces[i]);
  }
  EXPECT_EQ(index.size(), present.size());
  int absent = 0;
  for (const std::string& piece : pieces)
    for (std::size_t cut = 0; cut <= piece.size(); ++cut) {
      const std::string key = piece.substr(0, cut) + "z";
      EXPECT_EQ(index.find(key), std::nullopt) << key;
      if (!present.contains(piece.substr(0, cut))) {
        EXPECT_EQ(index.find(std::string_view(piece).substr(0, cut)), std::nullopt);
        ++absent;
      }
    }
  EXPECT_GT(absent, 0);
  EXPECT_EQ(PieceIndex{}.find("a"), std::nullopt);
  PieceIndex empty_key;
  empty_key.reserve(1);
  empty_key.emplace("", 7);
  EXPECT_EQ(empty_key.find(""), 7u);
  EXPECT_EQ(empty_key.find("a"), std::nullopt);
}

TEST(VocabularyTest, FindsAddedTokensFirstThenTheModel) {
  const auto model = load_model(R"({"type": "BPE", "vocab": {"a": 0, "<s>": 1}, "merges": []})");
  ASSERT_NE(model, nullptr);
  Vocabulary vocabulary{model.get(), {{"<s>", 5}, {"<mask>", 6}}};
  EXPECT_EQ(vocabulary.find("<s>"), 5);
  EXPECT_EQ(vocabulary.find("<mask>"), 6);
  EXPECT_EQ(vocabulary.find("a"), 0);
  EXPECT_EQ(vocabulary.find("b"), std::nullopt);
  const Vocabulary without_model{nullptr, {{"<s>", 5}}};
  EXPECT_EQ(without_model.find("<s>"), 5);
  EXPECT_EQ(without_model.find("a"), std::nullopt);
}

}  // namespace
}  // namespace accel::text

// The BPE model against HuggingFace tokenizers 0.23.3: each model loaded from the same JSON in Python, expected
// tokens (ids, values, byte offsets) from model.tokenize(word) (tests/text/make_token_model_golden.py cases).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
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
constexpr std::string_view kBpeModel = R"json({"type": "BPE", "dropout": null,
    "unk_token": "<unk>", "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false,
    "byte_fallback": false, "vocab": {"<unk>": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "bc": 5, "abc": 6, "aa": 7,
    "aaaa": 8, "é": 9, "aab": 10, "éé": 11}, "merges": ["#version: 0.2", "a b", "b c", "ab c", "a a", "aa aa",
    "aa b", "é é"]})json";
const std::vector<Case> BpeCases = {
    {"abc", {{6, "abc", 0, 3}}},
    {"aaaaa", {{8, "aaaa", 0, 4}, {1, "a", 4, 5}}},
    {"aaab", {{7, "aa", 0, 2}, {4, "ab", 2, 4}}},
    {"cab", {{3, "c", 0, 1}, {4, "ab", 1, 3}}},
    {"xx", {{0, "<unk>", 0, 1}, {0, "<unk>", 1, 2}}},
    {"axxb", {{1, "a", 0, 1}, {0, "<unk>", 1, 2}, {0, "<unk>", 2, 3}, {2, "b", 3, 4}}},
    {"ééé", {{11, "éé", 0, 4}, {9, "é", 4, 6}}},
    {"a", {{1, "a", 0, 1}}},
    {"bcbc", {{5, "bc", 0, 2}, {5, "bc", 2, 4}}},
    {"aabc", {{1, "a", 0, 1}, {6, "abc", 1, 4}}},
    {"x\u0301a", {{0, "<unk>", 0, 1}, {0, "<unk>", 1, 3}, {1, "a", 3, 4}}},
    {"日本", {{0, "<unk>", 0, 3}, {0, "<unk>", 3, 6}}},
};

constexpr std::string_view kBpeFuseUnkModel = R"json({"type": "BPE", "unk_token": "<unk>",
    "fuse_unk": true, "vocab": {"<unk>": 0, "a": 1, "b": 2, "ab": 3}, "merges": [["a", "b"]]})json";
const std::vector<Case> BpeFuseUnkCases = {
    {"axxb", {{1, "a", 0, 1}, {0, "<unk>", 1, 3}, {2, "b", 3, 4}}},
    {"xéx", {{0, "<unk>", 0, 4}}},
    {"xxx", {{0, "<unk>", 0, 3}}},
    {"abx😀ab", {{3, "ab", 0, 2}, {0, "<unk>", 2, 7}, {3, "ab", 7, 9}}},
};

constexpr std::string_view kBpeByteFallbackModel = R"json({"type": "BPE", "unk_token": "<unk>",
    "fuse_unk": true, "byte_fallback": true, "vocab": {"<unk>": 0, "<0xC3>": 1, "<0xA9>": 2, "a": 3,
    "<0xF0>": 4, "<0x9F>": 5, "<0x98>": 6, "b": 7, "ab": 8, "<0x61>": 9}, "merges": [["a", "b"]]})json";
const std::vector<Case> BpeByteFallbackCases = {
    {"é", {{1, "<0xC3>", 0, 1}, {2, "<0xA9>", 1, 2}}},
    {"aéb", {{3, "a", 0, 1}, {1, "<0xC3>", 1, 2}, {2, "<0xA9>", 2, 3}, {7, "b", 3, 4}}},
    {"😀", {{0, "<unk>", 0, 4}}},
    {"😀é", {{1, "<0xC3>", 0, 1}, {2, "<0xA9>", 1, 2}, {0, "<unk>", 2, 6}}},
    {"😀😀é", {{1, "<0xC3>", 0, 1}, {2, "<0xA9>", 1, 2}, {0, "<unk>", 2, 10}}},
    {"ab", {{8, "ab", 0, 2}}},
    {"a😀b", {{3, "a", 0, 1}, {0, "<unk>", 1, 5}, {7, "b", 5, 6}}},
};

constexpr std::string_view kBpeAffixModel = R"json({"type": "BPE", "unk_token": "<unk>",
    "continuing_subword_prefix": "##", "end_of_word_suffix": "</w>", "vocab": {"<unk>": 0, "a": 1, "##b": 2,
    "##c": 3, "c</w>": 4, "##c</w>": 5, "ab": 6, "abc</w>": 7, "##b</w>": 8, "b</w>": 9, "a</w>": 10,
    "ab</w>": 11}, "merges": [["a", "##b"], ["ab", "##c</w>"], ["a", "##b</w>"]]})json";
const std::vector<Case> BpeAffixCases = {
    {"abc", {{7, "abc</w>", 0, 3}}}, {"ab", {{11, "ab</w>", 0, 2}}},
    {"a", {{10, "a</w>", 0, 1}}},    {"c", {{4, "c</w>", 0, 1}}},
    {"b", {{9, "b</w>", 0, 1}}},     {"abb", {{6, "ab", 0, 2}, {8, "##b</w>", 2, 3}}},
    {"x", {{0, "<unk>", 0, 1}}},     {"abx", {{6, "ab", 0, 2}, {0, "<unk>", 2, 3}}},
};

constexpr std::string_view kBpeIgnoreMergesModel = R"json({"type": "BPE", "ignore_merges": true,
    "vocab": {"a": 0, "b": 1, "ab": 2, "ba": 3, "aba": 4}, "merges": ["a b"]})json";
const std::vector<Case> BpeIgnoreMergesCases = {
    {"aba", {{4, "aba", 0, 3}}},
    {"abab", {{2, "ab", 0, 2}, {2, "ab", 2, 4}}},
    {"ba", {{3, "ba", 0, 2}}},
    {"bab", {{1, "b", 0, 1}, {2, "ab", 1, 3}}},
};

constexpr std::string_view kBpeNoUnkModel = R"json({"vocab": {"a": 0, "b": 1, "ab": 2},
    "merges": [["a", "b"]]})json";
const std::vector<Case> BpeNoUnkCases = {
    {"abxab", {{2, "ab", 0, 2}, {2, "ab", 2, 4}}},
    {"xx", {}},
    {"x😀ab", {{2, "ab", 0, 2}}},
};

constexpr std::string_view kBpeSharedResultModel = R"json({"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2,
    "ab": 3, "bc": 4, "abc": 5, "d": 6, "cd": 7, "abcd": 8}, "merges": ["b c", "a b", "c d", "a bc", "ab c",
    "ab cd", "abc d"]})json";
const std::vector<Case> BpeSharedResultCases = {
    {"abc", {{5, "abc", 0, 3}}},
    {"abcd", {{8, "abcd", 0, 4}}},
    {"abcabcd", {{5, "abc", 0, 3}, {8, "abcd", 3, 7}}},
    {"bcd", {{4, "bc", 0, 2}, {6, "d", 2, 3}}},
};

// Unknown code points are separate unknown tokens; "#version" lines of the older merges form are skipped.
TEST(BpeTest, TokensMatchTokenizers) { expect_tokens(kBpeModel, BpeCases); }

TEST(BpeTest, FusedUnknownsMatchTokenizers) { expect_tokens(kBpeFuseUnkModel, BpeFuseUnkCases); }

// tokenizers adds byte pieces at once, ahead of an unknown token still waiting to be fused ("😀é").
TEST(BpeTest, ByteFallbackMatchesTokenizers) { expect_tokens(kBpeByteFallbackModel, BpeByteFallbackCases); }

TEST(BpeTest, PrefixAndSuffixMatchTokenizers) { expect_tokens(kBpeAffixModel, BpeAffixCases); }

TEST(BpeTest, IgnoreMergesMatchesTokenizers) { expect_tokens(kBpeIgnoreMergesModel, BpeIgnoreMergesCases); }

// Without an unknown token, unknown code points are dropped and the offsets after them shift, as in tokenizers.
TEST(BpeTest, DroppedUnknownsMatchTokenizers) { expect_tokens(kBpeNoUnkModel, BpeNoUnkCases); }

TEST(BpeTest, StaleQueuedMergesMatchTokenizers) { expect_tokens(kBpeSharedResultModel, BpeSharedResultCases); }

// Byte fallback over the prefix counts the prefix's bytes: tokenizers gives (3, 4) and (4, 5) past the end of "aé";
// we keep offsets within the word.
TEST(BpeTest, ByteFallbackOverThePrefixStaysWithinTheWord) {
  const auto model = load_model(R"({"type": "BPE", "continuing_subword_prefix": "##", "byte_fallback": true,
      "vocab": {"a": 0, "<0x23>": 1, "<0xC3>": 2, "<0xA9>": 3}, "merges": []})");
  ASSERT_NE(model, nullptr);
  testing::expect_tokens(
      *model,
      Case{"aé", {{0, "a", 0, 1}, {1, "<0x23>", 1, 2}, {1, "<0x23>", 2, 3}, {2, "<0xC3>", 3, 3}, {3, "<0xA9>", 3, 3}}});
}

// A word of 100,001 code points: merging must not go quadratic (tokenizers 0.23.3: 12,501 tokens, the last "a").
TEST(BpeTest, LongWordsMergeQuickly) {
  const auto model = load_model(R"({"type": "BPE", "vocab": {"a": 0, "aa": 1, "aaaa": 2, "aaaaaaaa": 3},
      "merges": ["a a", "aa aa", "aaaa aaaa"]})");
  ASSERT_NE(model, nullptr);
  std::vector<Token> tokens;
  model->tokenize(std::string(100001, 'a'), tokens);
  ASSERT_EQ(tokens.size(), 12501u);
  std::int64_t id_sum = 0;
  for (const Token& token : tokens) id_sum += token.id;
  EXPECT_EQ(id_sum, 37500);
  EXPECT_EQ(tokens.back().id, 0);
  EXPECT_EQ(tokens.back().offsets, (Range{100000, 100001}));
}

TEST(BpeTest, ThreadsTokenizeTheSameModelAtOnce) {
  const auto model = load_model(kBpeByteFallbackModel);
  ASSERT_NE(model, nullptr);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (std::size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 2000; ++round) {
        for (const Case& expected : BpeByteFallbackCases) {
          std::vector<Token> tokens;
          model->tokenize(expected.word, tokens);
          if (tokens.size() != expected.tokens.size() || tokens.front().id != expected.tokens.front().id) {
            ++mismatches[t];
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(mismatches.size(), 0));
}

TEST(BpeTest, LooksUpIdsBothWays) {
  const auto model = load_model(R"({"type": "BPE", "vocab": {"a": 4, "b": 1, "ab": 9}, "merges": ["a b"]})");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->vocabulary_size(), 10u);
  EXPECT_EQ(model->token_to_id("ab"), 9);
  EXPECT_EQ(model->id_to_token(1), "b");
  EXPECT_EQ(model->id_to_token(2), std::nullopt);
  EXPECT_EQ(model->id_to_token(-3), std::nullopt);
}

TEST(BpeTest, AcceptsNoDropout) {
  EXPECT_NE(load_model_object(with_field(kBpeModel, "dropout", 0)), nullptr);
  EXPECT_NE(load_model_object(with_field(kBpeModel, "dropout", 0.0)), nullptr);
  EXPECT_NE(load_model_object(with_field(kBpeModel, "dropout", kRemoved)), nullptr);
}

TEST(BpeTest, RefusesMalformedFields) {
  expect_refused(with_field(kBpeModel, "dropout", 0.1), "model.dropout is 0.1; expected null or 0");
  expect_refused(with_field(kBpeModel, "dropout", "0"), "model.dropout is \"0\"");
  expect_refused(with_field(kBpeModel, "vocab", kRemoved), "model.vocab is missing");
  expect_refused(with_field(kBpeModel, "vocab", json::object()), "model.vocab is {}");
  expect_refused(with_field(kBpeModel, "vocab", {{"a", -4}}), "model.vocab.a is -4");
  expect_refused(with_field(kBpeModel, "vocab", {{"a", 1}, {"b", 1}}), "model.vocab.b is 1");
  expect_refused(with_field(kBpeModel, "unk_token", 7), "model.unk_token is 7");
  expect_refused(with_field(kBpeModel, "unk_token", "[UNK]"),
                 "model.unk_token is \"[UNK]\"; the unknown token is not in the vocabulary");
  expect_refused(with_field(kBpeModel, "continuing_subword_prefix", 1), "model.continuing_subword_prefix is 1");
  expect_refused(with_field(kBpeModel, "end_of_word_suffix", json::array()), "model.end_of_word_suffix is []");
  expect_refused(with_field(kBpeModel, "fuse_unk", "yes"), "model.fuse_unk is \"yes\"");
  expect_refused(with_field(kBpeModel, "byte_fallback", 1), "model.byte_fallback is 1");
  expect_refused(with_field(kBpeModel, "ignore_merges", 0), "model.ignore_merges is 0");
  expect_refused(with_field(kBpeModel, "merges", kRemoved), "model.merges is missing");
  expect_refused(with_field(kBpeModel, "merges", "a b"), "model.merges is \"a b\"");
  expect_refused(with_field(kBpeModel, "merges", {"a b", json::array({"b", "c"})}), "model.merges[1] is [\"b\",\"c\"]");
  expect_refused(with_field(kBpeModel, "merges", {json::array({"a", "b"}), "b c"}), "model.merges[1] is \"b c\"");
  expect_refused(with_field(kBpeModel, "merges", json::array({json::array({"a", "b", "c"})})), "model.merges[0] is");
  expect_refused(with_field(kBpeModel, "merges", json::array({json::array({"a", 2})})), "model.merges[0] is [\"a\",2]");
  expect_refused(with_field(kBpeModel, "merges", {"a b", "a  b"}), "model.merges[1] is \"a  b\"; expected two");
  expect_refused(with_field(kBpeModel, "merges", {"a b", "ab"}), "model.merges[1] is \"ab\"; expected two");
  expect_refused(with_field(kBpeModel, "merges", {"a b", "a b c"}), "model.merges[1] is \"a b c\"");
  expect_refused(with_field(kBpeModel, "merges", {"a b", "a x"}),
                 "model.merges[1] is \"a x\"; \"x\" is not in the vocabulary");
  expect_refused(with_field(kBpeModel, "merges", {"b a"}),
                 "model.merges[0] is \"b a\"; \"ba\" is not in the vocabulary");
  // With a prefix, the merged piece drops the prefix's length from the right piece, which must be that long.
  json prefixed = with_field(kBpeAffixModel, "merges", json::array({json::array({"a", "b</w>"})}));
  expect_refused(prefixed, "model.merges[0] is [\"a\",\"b</w>\"]; \"a/w>\" is not in the vocabulary");
  prefixed["merges"] = json::array({json::array({"a", "a"})});
  expect_refused(prefixed, "model.merges[0] is [\"a\",\"a\"]; \"a\" is not in the vocabulary");
}

}  // namespace
}  // namespace accel::text

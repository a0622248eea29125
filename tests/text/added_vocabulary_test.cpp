// AddedVocabulary against HuggingFace tokenizers 0.23.3: a tokenizer with these added tokens, a Lowercase
// normalizer (or none), no pre-tokenizer and a WordLevel model that knows only [UNK] gives one token per split, so
// its encoding shows the splits: the expected values below were printed by a Python script with tokenizers 0.23.3
// (character offsets converted to bytes; id 0, "[UNK]" for a split that is not an added token).
#include "text/tokenizer/added_vocabulary.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace accel::text {

void PrintTo(const Range& range, std::ostream* out) { *out << "{" << range.begin << ", " << range.end << "}"; }

namespace {

class LowercaseNormalizer final : public Normalizer {
 public:
  void normalize(NormalizedString& text) const override { text.lowercase(); }
};

std::vector<AddedToken> added_tokens() {
  // In tokenizers' order, with the ids it gave them after the one-token model vocabulary.
  return {
      {.content = "<mask>", .id = 1, .special = true, .normalized = false, .lstrip = true, .rstrip = true},
      {.content = "[L]", .id = 2, .normalized = false, .lstrip = true},
      {.content = "[R]", .id = 3, .normalized = false, .rstrip = true},
      {.content = "Yes", .id = 4, .normalized = true},
      {.content = "xx", .id = 5, .normalized = false, .single_word = true},
      {.content = "ab", .id = 6, .normalized = false},
      {.content = "abc", .id = 7, .normalized = false},
      {.content = "bcd", .id = 8, .normalized = false},
      {.content = "\xe4\xb8\xad", .id = 9, .normalized = false, .single_word = true},
      {.content = "\xf0\x9f\x99\x82", .id = 10, .normalized = false},
      {.content = "\xc3\x9cn\xc3\xaf", .id = 11, .normalized = true, .lstrip = true, .single_word = true},
  };
}

struct Part {
  std::int32_t id = 0;
  std::string value;
  Range offsets;
  friend bool operator==(const Part&, const Part&) = default;
};

void PrintTo(const Part& part, std::ostream* out) {
  *out << "{" << part.id << ", \"" << part.value << "\", {" << part.offsets.begin << ", " << part.offsets.end << "}}";
}

struct Case {
  std::string text;
  std::vector<Part> parts;
};

std::vector<Part> parts_of(const AddedVocabulary& vocabulary, const std::string& text, const Normalizer* normalizer) {
  std::vector<Part> parts;
  for (const Split& split : vocabulary.extract_and_normalize(text, normalizer)) {
    if (!split.tokens) {
      parts.push_back({0, "[UNK]", split.text.original_range()});
      continue;
    }
    for (const Token& token : *split.tokens)
      parts.push_back({token.id, token.value, split.text.original_range(token.offsets)});
  }
  return parts;
}

TEST(AddedVocabularyTest, SplitsAsTokenizersDoesWithALowercaseNormalizer) {
  const std::vector<Case> cases = {
      {"", {}},
      {"   ", {{0, "[UNK]", {0, 3}}}},
      {"hello <mask> world", {{0, "[UNK]", {0, 5}}, {1, " <mask> ", {5, 13}}, {0, "[UNK]", {13, 18}}}},
      {"a  [L]  b  [R]  c",
       {{0, "[UNK]", {0, 1}},
        {2, "  [L]", {1, 6}},
        {0, "[UNK]", {6, 11}},
        {3, "[R]  ", {11, 16}},
        {0, "[UNK]", {16, 17}}}},
      {"<mask><mask>  <mask>", {{1, "<mask>", {0, 6}}, {1, "<mask>  ", {6, 14}}, {1, "<mask>", {14, 20}}}},
      {"YES yes Yes yES",
       {{4, "yes", {0, 3}},
        {0, "[UNK]", {3, 4}},
        {4, "yes", {4, 7}},
        {0, "[UNK]", {7, 8}},
        {4, "yes", {8, 11}},
        {0, "[UNK]", {11, 12}},
        {4, "yes", {12, 15}}}},
      {"xx axx xxb (xx) xx_ x\xcc\x81xx xx\xcc\x81 \xe0\xb8\xaa\xe0\xb8\xa7xx",
       {{5, "xx", {0, 2}}, {0, "[UNK]", {2, 12}}, {5, "xx", {12, 14}}, {0, "[UNK]", {14, 39}}}},
      {"abcd bcd abab",
       {{7, "abc", {0, 3}},
        {0, "[UNK]", {3, 5}},
        {8, "bcd", {5, 8}},
        {0, "[UNK]", {8, 9}},
        {6, "ab", {9, 11}},
        {6, "ab", {11, 13}}}},
      {"\xe4\xb8\xad\xe6\x96\x87 \xe4\xb8\xad \xe4\xb8\xad.",
       {{0, "[UNK]", {0, 7}},
        {9, "\xe4\xb8\xad", {7, 10}},
        {0, "[UNK]", {10, 11}},
        {9, "\xe4\xb8\xad", {11, 14}},
        {0, "[UNK]", {14, 15}}}},
      {"a\xf0\x9f\x99\x82"
       "b\xf0\x9f\x99\x82",
       {{0, "[UNK]", {0, 1}},
        {10, "\xf0\x9f\x99\x82", {1, 5}},
        {0, "[UNK]", {5, 6}},
        {10, "\xf0\x9f\x99\x82", {6, 10}}}},
      {"\xe3\x80\x80<mask>\xe3\x80\x80\xc2\xa0[R]\xe2\x80\x83x",
       {{1, "\xe3\x80\x80<mask>\xe3\x80\x80\xc2\xa0", {0, 14}},
        {3, "[R]\xe2\x80\x83", {14, 20}},
        {0, "[UNK]", {20, 21}}}},
      {"\xc4\xb0 Yes \xc4\xb0Yes",
       {{0, "[UNK]", {0, 3}}, {4, "yes", {3, 6}}, {0, "[UNK]", {6, 9}}, {4, "yes", {9, 12}}}},
      {"\xc3\x9cN\xc3\x8f \xc3\xbcn\xc3\xaf\xc3\xbcn\xc3\xaf  \xc3\xbcn\xc3\xaf",
       {{11, "\xc3\xbcn\xc3\xaf", {0, 5}}, {0, "[UNK]", {5, 16}}, {11, "  \xc3\xbcn\xc3\xaf", {16, 23}}}},
      {"\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 <mask> "
       "\xe0\xb8\xaa\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\xaa\xe0\xb8\x94\xe0\xb8\xb5",
       {{0, "[UNK]", {0, 10}}, {1, " <mask> ", {10, 18}}, {0, "[UNK]", {18, 36}}}},
      {"tab\x09[R]\x0a\x0anext",
       {{0, "[UNK]", {0, 1}},
        {6, "ab", {1, 3}},
        {0, "[UNK]", {3, 4}},
        {3, "[R]\x0a\x0a", {4, 9}},
        {0, "[UNK]", {9, 13}}}},
      {"ctrl\x01<mask>\x7f", {{0, "[UNK]", {0, 5}}, {1, "<mask>", {5, 11}}, {0, "[UNK]", {11, 12}}}},
  };
  const LowercaseNormalizer lowercase;
  const AddedVocabulary vocabulary(added_tokens(), &lowercase);
  for (const Case& c : cases) EXPECT_EQ(parts_of(vocabulary, c.text, &lowercase), c.parts) << c.text;
}

TEST(AddedVocabularyTest, SplitsAsTokenizersDoesWithoutANormalizer) {
  const std::vector<Case> cases = {
      {"", {}},
      {"   ", {{0, "[UNK]", {0, 3}}}},
      {"hello <mask> world", {{0, "[UNK]", {0, 5}}, {1, " <mask> ", {5, 13}}, {0, "[UNK]", {13, 18}}}},
      {"a  [L]  b  [R]  c",
       {{0, "[UNK]", {0, 1}},
        {2, "  [L]", {1, 6}},
        {0, "[UNK]", {6, 11}},
        {3, "[R]  ", {11, 16}},
        {0, "[UNK]", {16, 17}}}},
      {"<mask><mask>  <mask>", {{1, "<mask>", {0, 6}}, {1, "<mask>  ", {6, 14}}, {1, "<mask>", {14, 20}}}},
      {"YES yes Yes yES", {{0, "[UNK]", {0, 8}}, {4, "Yes", {8, 11}}, {0, "[UNK]", {11, 15}}}},
      {"xx axx xxb (xx) xx_ x\xcc\x81xx xx\xcc\x81 \xe0\xb8\xaa\xe0\xb8\xa7xx",
       {{5, "xx", {0, 2}}, {0, "[UNK]", {2, 12}}, {5, "xx", {12, 14}}, {0, "[UNK]", {14, 39}}}},
      {"abcd bcd abab",
       {{7, "abc", {0, 3}},
        {0, "[UNK]", {3, 5}},
        {8, "bcd", {5, 8}},
        {0, "[UNK]", {8, 9}},
        {6, "ab", {9, 11}},
        {6, "ab", {11, 13}}}},
      {"\xe4\xb8\xad\xe6\x96\x87 \xe4\xb8\xad \xe4\xb8\xad.",
       {{0, "[UNK]", {0, 7}},
        {9, "\xe4\xb8\xad", {7, 10}},
        {0, "[UNK]", {10, 11}},
        {9, "\xe4\xb8\xad", {11, 14}},
        {0, "[UNK]", {14, 15}}}},
      {"a\xf0\x9f\x99\x82"
       "b\xf0\x9f\x99\x82",
       {{0, "[UNK]", {0, 1}},
        {10, "\xf0\x9f\x99\x82", {1, 5}},
        {0, "[UNK]", {5, 6}},
        {10, "\xf0\x9f\x99\x82", {6, 10}}}},
      {"\xe3\x80\x80<mask>\xe3\x80\x80\xc2\xa0[R]\xe2\x80\x83x",
       {{1, "\xe3\x80\x80<mask>\xe3\x80\x80\xc2\xa0", {0, 14}},
        {3, "[R]\xe2\x80\x83", {14, 20}},
        {0, "[UNK]", {20, 21}}}},
      {"\xc4\xb0 Yes \xc4\xb0Yes",
       {{0, "[UNK]", {0, 3}}, {4, "Yes", {3, 6}}, {0, "[UNK]", {6, 9}}, {4, "Yes", {9, 12}}}},
      {"\xc3\x9cN\xc3\x8f \xc3\xbcn\xc3\xaf\xc3\xbcn\xc3\xaf  \xc3\xbcn\xc3\xaf", {{0, "[UNK]", {0, 23}}}},
      {"\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 <mask> "
       "\xe0\xb8\xaa\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\xaa\xe0\xb8\x94\xe0\xb8\xb5",
       {{0, "[UNK]", {0, 10}}, {1, " <mask> ", {10, 18}}, {0, "[UNK]", {18, 36}}}},
      {"tab\x09[R]\x0a\x0anext",
       {{0, "[UNK]", {0, 1}},
        {6, "ab", {1, 3}},
        {0, "[UNK]", {3, 4}},
        {3, "[R]\x0a\x0a", {4, 9}},
        {0, "[UNK]", {9, 13}}}},
      {"ctrl\x01<mask>\x7f", {{0, "[UNK]", {0, 5}}, {1, "<mask>", {5, 11}}, {0, "[UNK]", {11, 12}}}},
  };
  const AddedVocabulary vocabulary(added_tokens(), nullptr);
  for (const Case& c : cases) EXPECT_EQ(parts_of(vocabulary, c.text, nullptr), c.parts) << c.text;
}

TEST(AddedVocabularyTest, LooksTokensUpByContentAndGivesNormalizedOnesInTheirMatchedForm) {
  const LowercaseNormalizer lowercase;
  const AddedVocabulary vocabulary(added_tokens(), &lowercase);
  EXPECT_EQ(vocabulary.size(), 11U);
  EXPECT_EQ(vocabulary.id_limit(), 12U);
  EXPECT_EQ(vocabulary.token_to_id("Yes"), 4);
  EXPECT_EQ(vocabulary.token_to_id("yes"), std::nullopt);
  // tokenizers 0.23.3's id_to_token: the normalized form for normalized tokens, the content for the others.
  EXPECT_EQ(vocabulary.id_to_token(4), "yes");
  EXPECT_EQ(vocabulary.id_to_token(11), "\xc3\xbcn\xc3\xaf");
  EXPECT_EQ(vocabulary.id_to_token(1), "<mask>");
  EXPECT_EQ(vocabulary.id_to_token(12), std::nullopt);
  EXPECT_EQ(AddedVocabulary().id_limit(), 0U);
}

TEST(AddedVocabularyTest, AnEmptyVocabularyOnlyNormalizes) {
  const LowercaseNormalizer lowercase;
  const std::vector<Split> splits = AddedVocabulary().extract_and_normalize(
      "A\xc4\xb0"
      "B",
      &lowercase);
  ASSERT_EQ(splits.size(), 1U);
  EXPECT_EQ(splits[0].text.normalized(),
            "ai\xcc\x87"
            "b");
  EXPECT_FALSE(splits[0].tokens.has_value());
  EXPECT_TRUE(AddedVocabulary().extract_and_normalize("", &lowercase).empty());
}

}  // namespace
}  // namespace accel::text

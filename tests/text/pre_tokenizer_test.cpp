// Pre-tokenizers against HuggingFace tokenizers 0.23.3: pre_tokenizer_cases.inc holds, for each configuration
// and text, the splits tokenizers made (PreTokenizedString.get_splits with original byte offsets), written by
// make_pre_tokenizer_cases.py.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "text/tokenizer/byte_level.hpp"
#include "text/tokenizer/components.hpp"
#include "text/tokenizer/pattern.hpp"

namespace accel::text {
namespace {

using nlohmann::json;

const json& cases() {
  static const json parsed = json::parse(
#include "pre_tokenizer_cases.inc"
  );
  return parsed;
}

std::unique_ptr<PreTokenizer> made(const json& config) {
  auto pre_tokenizer = make_pre_tokenizer(config, "pre_tokenizer");
  EXPECT_TRUE(pre_tokenizer.ok()) << pre_tokenizer.status().to_string();
  return pre_tokenizer.ok() ? std::move(*pre_tokenizer) : nullptr;
}

json run(const PreTokenizer& pre_tokenizer, std::vector<Split> splits) {
  pre_tokenizer.pre_tokenize(splits);
  json out = json::array();
  for (const Split& split : splits) {
    out.push_back({split.text.normalized(), split.text.original_range().begin, split.text.original_range().end});
  }
  return out;
}

TEST(PreTokenizer, EveryConfigurationSplitsLikeTokenizers) {
  ASSERT_GT(cases().size(), 300u);
  for (const json& c : cases()) {
    SCOPED_TRACE(c["config"].dump() + " on " + c["text"].dump());
    const auto pre_tokenizer = made(c["config"]);
    ASSERT_NE(pre_tokenizer, nullptr);
    std::vector<Split> splits;
    splits.push_back({NormalizedString(c["text"].get<std::string>()), std::nullopt});
    EXPECT_EQ(run(*pre_tokenizer, std::move(splits)), c["splits"]);
  }
}

// A part that already has tokens (an added token) passes through untouched, in place; the others are split with
// their absolute offsets. Expected values: tokenizers' encode of "a b <s> c d" with "<s>" added and this
// Metaspace.
TEST(PreTokenizer, SplitsWithTokensPassThroughAndOffsetsStayAbsolute) {
  const auto pre_tokenizer =
      made(json::parse(R"({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first"})"));
  ASSERT_NE(pre_tokenizer, nullptr);
  const std::string text = "a b <s> c d";
  std::vector<Split> splits;
  splits.push_back({NormalizedString(std::string_view(text).substr(0, 4), 0), std::nullopt});
  splits.push_back({NormalizedString(std::string_view(text).substr(4, 3), 4), std::vector<Token>{{7, "<s>", {0, 3}}}});
  splits.push_back({NormalizedString(std::string_view(text).substr(7), 7), std::nullopt});
  pre_tokenizer->pre_tokenize(splits);
  std::vector<std::string> texts;
  std::vector<Range> offsets;
  for (const Split& split : splits) {
    texts.push_back(split.text.normalized());
    offsets.push_back(split.text.original_range());
  }
  // "first" prepends only to the part at offset 0; the space before "c" becomes its "▁" prefix.
  EXPECT_EQ(texts, (std::vector<std::string>{"▁a", "▁b", "▁", "<s>", "▁c", "▁d"}));
  EXPECT_EQ(offsets, (std::vector<Range>{{0, 1}, {1, 3}, {3, 4}, {4, 7}, {7, 9}, {9, 11}}));
  ASSERT_TRUE(splits[3].tokens.has_value());
  EXPECT_EQ((*splits[3].tokens)[0].id, 7);
}

TEST(ByteLevel, AlphabetIsGpt2s) {
  EXPECT_EQ(byte_to_char(' '), U'Ġ');
  EXPECT_EQ(byte_to_char('\n'), U'Ċ');
  EXPECT_EQ(byte_to_char('!'), U'!');
  EXPECT_EQ(byte_to_char(0x00), 0x100u);
  EXPECT_EQ(byte_to_char(0x7F), 0x121u);
  EXPECT_EQ(byte_to_char(0xAD), 0x143u);
  EXPECT_EQ(byte_to_char(0xFF), 0xFFu);
  for (unsigned byte = 0; byte < 256; ++byte) {
    EXPECT_EQ(char_to_byte(byte_to_char(static_cast<std::uint8_t>(byte))), byte);
  }
  EXPECT_FALSE(char_to_byte(U' ').has_value());
  EXPECT_FALSE(char_to_byte(0x144).has_value());
  EXPECT_EQ(to_byte_level("é x"), "Ã©Ġx");
  EXPECT_EQ(from_byte_level("Ã©Ġx"), "é x");
  EXPECT_FALSE(from_byte_level("a b").has_value());
}

struct Refusal {
  const char* config;
  const char* names;  // a part of the message
};

TEST(PreTokenizer, RefusesWhatTokenizersRefusesOrWeDoNotRun) {
  const std::vector<Refusal> refusals = {
      {R"({"type": "UnicodeScripts"})", "pre_tokenizer.type is \"UnicodeScripts\""},
      {R"({"type": "CharDelimiterSplit", "delimiter": "x"})", "CharDelimiterSplit is not supported"},
      {R"({"pretokenizers": []})", "pre_tokenizer.type is missing"},
      {R"({"type": "Punctuation", "behavior": "isolated"})", "pre_tokenizer.behavior is \"isolated\""},
      {R"({"type": "Split", "pattern": {"String": " "}, "behavior": "Split", "invert": false})",
       "pre_tokenizer.behavior is \"Split\""},
      {R"({"type": "Split", "pattern": {"Regex": "("}, "behavior": "Removed", "invert": false})",
       "pre_tokenizer.pattern.Regex is \"(\""},
      {R"({"type": "Split", "pattern": {"Regex": "[a-z&&[^aeiou]]"}, "behavior": "Removed", "invert": false})",
       "intersection"},
      {R"({"type": "Split", "pattern": {"Glob": "*"}, "behavior": "Removed", "invert": false})",
       "pre_tokenizer.pattern is {\"Glob\":\"*\"}"},
      {R"({"type": "Split", "pattern": {"String": " "}, "behavior": "Removed"})", "pre_tokenizer.invert is missing"},
      {R"({"type": "Digits"})", "pre_tokenizer.individual_digits is missing"},
      {R"({"type": "ByteLevel", "add_prefix_space": true})", "pre_tokenizer.trim_offsets is missing"},
      {R"({"type": "ByteLevel", "add_prefix_space": 1, "trim_offsets": true})", "pre_tokenizer.add_prefix_space is 1"},
      {R"({"type": "Metaspace", "replacement": "ab"})", "pre_tokenizer.replacement is \"ab\""},
      {R"({"type": "Metaspace", "replacement": ""})", "pre_tokenizer.replacement is \"\""},
      {R"({"type": "Metaspace", "replacement": "_", "prepend_scheme": "First"})", "pre_tokenizer.prepend_scheme"},
      {R"({"type": "Metaspace", "replacement": "_", "add_prefix_space": false})", "contradicts prepend_scheme"},
      {R"({"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, {"type": "Nope"}]})",
       "pre_tokenizer.pretokenizers[1].type is \"Nope\""},
      {R"({"type": "Sequence", "pretokenizers": {}})", "pre_tokenizer.pretokenizers is {}"},
      {R"("ByteLevel")", "expected an object"},
  };
  for (const Refusal& refusal : refusals) {
    SCOPED_TRACE(refusal.config);
    const auto made = make_pre_tokenizer(json::parse(refusal.config), "pre_tokenizer");
    ASSERT_FALSE(made.ok());
    EXPECT_EQ(made.code(), Code::invalid_argument);
    EXPECT_NE(made.status().to_string().find(refusal.names), std::string::npos) << made.status().to_string();
  }
}

TEST(PreTokenizer, RefusesSequencesNestedTooDeeply) {
  json config = {{"type", "Whitespace"}};
  for (int i = 0; i < 40; ++i) config = {{"type", "Sequence"}, {"pretokenizers", json::array({config})}};
  const auto made = make_pre_tokenizer(config, "pre_tokenizer");
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().to_string().find("nested too deeply"), std::string::npos);
}

}  // namespace
}  // namespace accel::text

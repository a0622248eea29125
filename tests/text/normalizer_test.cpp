// The normalizers of a tokenizer.json against HuggingFace tokenizers 0.23.3: every expected text and alignment (in
// normalizer_cases.inc) was printed by tokenizers (see normalizer_expectations.hpp), and the refusals name the field
// at fault.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "text/normalizer_expectations.hpp"
#include "text/tokenizer/components.hpp"

namespace accel::text {
namespace {

using namespace std::string_view_literals;

#include "normalizer_cases.inc"

TEST(Normalizer, UnicodeFormsAlignAsTokenizersDoes) {
  expect_cases(R"({"type": "NFC"})", kNfc);
  expect_cases(R"({"type": "NFD"})", kNfd);
  expect_cases(R"({"type": "NFKC"})", kNfkc);
  expect_cases(R"({"type": "NFKD"})", kNfkd);
}

TEST(Normalizer, StripAccentsRemovesEveryCombiningMark) {
  expect_cases(R"({"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]})",
               kStripAccentsAfterNfd);
}

TEST(Normalizer, BertNormalizerCleansPadsChineseStripsAndLowercases) {
  expect_cases(R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                   "strip_accents": null, "lowercase": true})",
               kBertDefault);
  // strip_accents left out follows lowercase: false here.
  expect_cases(R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "lowercase": false})",
               kBertCased);
  expect_cases(R"({"type": "BertNormalizer", "clean_text": false, "handle_chinese_chars": false,
                   "strip_accents": true, "lowercase": false})",
               kBertStripNoLower);
}

TEST(Normalizer, StripRemovesUnicodeWhiteSpaceAtTheEndsAsked) {
  expect_cases(R"({"type": "Strip", "strip_left": true, "strip_right": true})", kStripBoth);
  expect_cases(R"({"type": "Strip", "strip_left": true, "strip_right": false})", kStripLeft);
}

TEST(Normalizer, ReplaceAlignsTheContentToTheLastByteOfEachMatch) {
  expect_cases(R"({"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"})", kReplaceString);
  expect_cases(R"({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})", kReplaceRegexRuns);
  expect_cases(R"({"type": "Replace", "pattern": {"Regex": "[aeiou]"}, "content": ""})", kReplaceToEmpty);
  expect_cases(R"({"type": "Replace", "pattern": {"String": "ab"}, "content": "XYZ"})", kReplaceLonger);
  expect_cases(R"({"type": "Replace", "pattern": {"Regex": "[éü]"}, "content": "<>"})", kReplaceAdjacentMultiByte);
}

TEST(Normalizer, ReplaceAlignsMatchesThatFollowEachOtherApart) {
  // After NFKD both letters of each "ﬁ" stand for the ligature, so matches of "fi" follow each other with the
  // first and last byte aligned alike, except the last one: plain letters after a ligature.
  const std::string_view nfkd_then = R"({"type": "Sequence", "normalizers": [{"type": "NFKD"},
      {"type": "Replace", "pattern": {"String": "fi"}, "content": )";
  expect_cases(std::string(nfkd_then) + R"("_"}]})",
               {{"ﬁﬁf ﬁfi"sv, "__f __"sv, {{0, 3}, {3, 6}, {6, 7}, {7, 8}, {8, 11}, {12, 13}}}});
  expect_cases(std::string(nfkd_then) + R"("<>"}]})",
               {{"ﬁﬁf ﬁfi"sv,
                 "<><>f <><>"sv,
                 {{0, 3}, {0, 3}, {3, 6}, {3, 6}, {6, 7}, {7, 8}, {8, 11}, {8, 11}, {12, 13}, {12, 13}}}});
}

TEST(Normalizer, PrependOnlyWhenThereIsText) {
  expect_cases(R"({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                   {"type": "Lowercase"}]})",
               kPrependLowercase);
}

TEST(Normalizer, OffsetsMapBackToTheOriginalText) {
  const auto normalizer = normalizer_from(R"({"type": "Sequence", "normalizers": [{"type": "NFKC"},
      {"type": "Replace", "pattern": {"String": "fi"}, "content": "FI"}]})");
  ASSERT_NE(normalizer, nullptr);
  // "ﬁ" (bytes 0..3) → "FI"; "①" (4..7) → "1"; "ｶﾞ" (8..14) composes to "ガ", which stands for "ｶ" alone.
  NormalizedString text("ﬁ ① ｶﾞx", 100);
  normalizer->normalize(text);
  ASSERT_EQ(text.normalized(), "FI 1 ガx");
  EXPECT_EQ(text.original_range(Range{0, 2}), (Range{100, 103}));
  EXPECT_EQ(text.original_range(Range{1, 2}), (Range{100, 103}));
  EXPECT_EQ(text.original_range(Range{3, 4}), (Range{104, 107}));
  EXPECT_EQ(text.original_range(Range{5, 8}), (Range{108, 111}));
  EXPECT_EQ(text.original_range(Range{4, 9}), (Range{107, 115}));
  EXPECT_EQ(text.original_range(Range{8, 9}), (Range{114, 115}));
}

// -- refusals ---------------------------------------------------------------------------------------------------

std::string refusal(std::string_view json_text) {
  auto normalizer = make_normalizer(nlohmann::json::parse(json_text), "normalizer");
  EXPECT_FALSE(normalizer.ok());
  if (normalizer.ok()) return {};
  EXPECT_EQ(normalizer.status().code(), Code::invalid_argument);
  return std::string(normalizer.status().message());
}

TEST(Normalizer, RefusesATypeItDoesNotRunNamingIt) {
  const std::string nmt = refusal(R"({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Nmt"}]})");
  EXPECT_NE(nmt.find("normalizer.normalizers[1].type"), std::string::npos) << nmt;
  EXPECT_NE(nmt.find("Nmt"), std::string::npos) << nmt;
  EXPECT_NE(refusal(R"({"type": "ByteLevel"})").find("ByteLevel"), std::string::npos);
  EXPECT_NE(refusal(R"({"clean_text": true})").find("normalizer.type"), std::string::npos);
  EXPECT_NE(refusal(R"({"type": 3})").find("normalizer.type"), std::string::npos);
  EXPECT_NE(refusal(R"([{"type": "NFC"}])").find("normalizer"), std::string::npos);
}

TEST(Normalizer, RefusesMissingOrMistypedFields) {
  EXPECT_NE(refusal(R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true})")
                .find("normalizer.lowercase"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"type": "BertNormalizer", "clean_text": 1, "handle_chinese_chars": true,
                        "lowercase": true})")
                .find("normalizer.clean_text"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                        "lowercase": true, "strip_accents": "yes"})")
                .find("normalizer.strip_accents"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"type": "Strip", "strip_left": true})").find("normalizer.strip_right"), std::string::npos);
  EXPECT_NE(refusal(R"({"type": "Prepend"})").find("normalizer.prepend"), std::string::npos);
  EXPECT_NE(refusal(R"({"type": "Replace", "pattern": {"String": "a"}})").find("normalizer.content"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"type": "Replace", "pattern": {"Regex": "(a"}, "content": ""})").find("normalizer.pattern"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"type": "Sequence"})").find("normalizer.normalizers"), std::string::npos);
  EXPECT_NE(refusal(R"({"type": "Sequence", "normalizers": {"type": "NFC"}})").find("normalizer.normalizers"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"type": "Precompiled", "precompiled_charsmap": null})").find("precompiled_charsmap"),
            std::string::npos);
}

TEST(Normalizer, RefusesSequencesNestedTooDeep) {
  nlohmann::json nested = {{"type", "NFC"}};
  for (int level = 0; level < 40; ++level) {
    nested = {{"type", "Sequence"}, {"normalizers", nlohmann::json::array({nested})}};
  }
  EXPECT_NE(refusal(nested.dump()).find("nested"), std::string::npos);
  // Eight levels load.
  nested = {{"type", "Lowercase"}};
  for (int level = 0; level < 8; ++level) {
    nested = {{"type", "Sequence"}, {"normalizers", nlohmann::json::array({nested})}};
  }
  EXPECT_NE(normalizer_from(nested.dump()), nullptr);
}

}  // namespace
}  // namespace accel::text

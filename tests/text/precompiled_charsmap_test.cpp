// SentencePiece's precompiled charsmap as tokenizers 0.23.3 runs it (its Precompiled normalizer): XLM-R's
// charsmap (tests/text/data, taken from multilingual-e5-small's tokenizer.json) on varied text, small charsmaps
// built here for the lookup rules, and the refusal of malformed ones. The expected texts and alignments were
// printed by tokenizers (see normalizer_expectations.hpp); those of the small charsmaps by tokenizers given the
// same bytes.
#include "text/tokenizer/precompiled_charsmap.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/normalizer_expectations.hpp"

namespace accel::text {
namespace {

using namespace std::string_view_literals;

std::string xlmr_charsmap_base64() {
  std::ifstream file(ACCEL_XLMR_CHARSMAP);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string xlmr_precompiled_json() {
  nlohmann::json precompiled = {{"type", "Precompiled"}, {"precompiled_charsmap", xlmr_charsmap_base64()}};
  return precompiled.dump();
}

// Accents (a grapheme under 6 bytes is replaced whole), compatibility characters, Hangul, CJK, emoji (ZWJ
// becomes a space), Thai, Arabic, zero-width and control characters (U+200B maps to a space, U+0007 and U+007F
// are removed), and runs of spaces that XLM-R's Replace then squeezes.
const std::vector<NormalizerCase> kXlmrPrecompiled = {
    {""sv, ""sv, {}},
    {"Héllo Wörld"sv,
     "Héllo Wörld"sv,
     {{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 10}, {10, 11}, {11, 12}, {12, 13}}},
    {"e\u0301te\u0301 a\u0323\u0307"sv, "été ạ"sv, {{0, 1}, {3, 4}, {4, 5}, {7, 8}, {8, 9}}},
    {"ﬁ ① ｶﾞ ㌀ ¼ x² ＡＢＣ１２"sv,
     "fi 1 カ\u3099 アパート 1⁄4 x2 ABC12"sv,
     {{0, 3},   {0, 3},   {3, 4},   {4, 7},   {7, 8},   {8, 11},  {11, 14}, {14, 15}, {15, 18},
      {15, 18}, {15, 18}, {15, 18}, {18, 19}, {19, 21}, {19, 21}, {19, 21}, {21, 22}, {22, 23},
      {23, 25}, {25, 26}, {26, 29}, {29, 32}, {32, 35}, {35, 38}, {38, 41}}},
    {"한국어 각"sv, "한국어 각"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 10}, {10, 13}, {13, 16}, {16, 19}}},
    {"中文字符 漢字"sv, "中文字符 漢字"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 13}, {13, 16}, {16, 19}}},
    {"👩\u200d👩\u200d👧 ok 👍🏽"sv,
     "👩 👩 👧 ok 👍🏽"sv,
     {{0, 4}, {4, 7}, {7, 11}, {11, 14}, {14, 18}, {18, 19}, {19, 20}, {20, 21}, {21, 22}, {22, 26}, {26, 30}}},
    {"ภาษาไทย กำ"sv,
     "ภาษาไทย ก\u0e4dา"sv,
     {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 15}, {15, 18}, {18, 21}, {21, 22}, {22, 25}, {25, 28}, {25, 28}}},
    {"العربية ١٢٣ ﻻ"sv,
     "العربية ١٢٣ لا"sv,
     {{0, 2},
      {2, 4},
      {4, 6},
      {6, 8},
      {8, 10},
      {10, 12},
      {12, 14},
      {14, 15},
      {15, 17},
      {17, 19},
      {19, 21},
      {21, 22},
      {22, 25},
      {22, 25}}},
    {"\u200bstart\u200b \u200b\u200b"sv,
     " start    "sv,
     {{0, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 11}, {11, 12}, {12, 15}, {15, 18}}},
    {"\011\012\015 x\000y\007z\177\u0085 \u00a0\u3000end"sv,
     "    x\000yz\u0085   end"sv,
     {{0, 1},
      {1, 2},
      {2, 3},
      {3, 4},
      {4, 5},
      {5, 6},
      {6, 7},
      {8, 9},
      {10, 12},
      {12, 13},
      {13, 15},
      {15, 18},
      {18, 19},
      {19, 20},
      {20, 21}}},
    {"a    b  \u3000 c"sv,
     "a    b    c"sv,
     {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 11}, {11, 12}, {12, 13}}},
    {"\ufeff\u00ad\u2028x"sv, " \u00ad x"sv, {{0, 3}, {3, 5}, {5, 8}, {8, 9}}},
    {"№ ™ ℃ ⅷ ㈱ ﷺ"sv,
     "No TM °C viii (株) صلى الله عليه وسلم"sv,
     {{0, 3},   {0, 3},   {3, 4},   {4, 7},   {4, 7},   {7, 8},   {8, 11},  {8, 11},  {11, 12},
      {12, 15}, {12, 15}, {12, 15}, {12, 15}, {15, 16}, {16, 19}, {16, 19}, {16, 19}, {19, 20},
      {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23},
      {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}}},
};
const std::vector<NormalizerCase> kXlmrSequence = {
    {""sv, ""sv, {}},
    {"Héllo Wörld"sv,
     "Héllo Wörld"sv,
     {{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 10}, {10, 11}, {11, 12}, {12, 13}}},
    {"e\u0301te\u0301 a\u0323\u0307"sv, "été ạ"sv, {{0, 1}, {3, 4}, {4, 5}, {7, 8}, {8, 9}}},
    {"ﬁ ① ｶﾞ ㌀ ¼ x² ＡＢＣ１２"sv,
     "fi 1 カ\u3099 アパート 1⁄4 x2 ABC12"sv,
     {{0, 3},   {0, 3},   {3, 4},   {4, 7},   {7, 8},   {8, 11},  {11, 14}, {14, 15}, {15, 18},
      {15, 18}, {15, 18}, {15, 18}, {18, 19}, {19, 21}, {19, 21}, {19, 21}, {21, 22}, {22, 23},
      {23, 25}, {25, 26}, {26, 29}, {29, 32}, {32, 35}, {35, 38}, {38, 41}}},
    {"한국어 각"sv, "한국어 각"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 10}, {10, 13}, {13, 16}, {16, 19}}},
    {"中文字符 漢字"sv, "中文字符 漢字"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 13}, {13, 16}, {16, 19}}},
    {"👩\u200d👩\u200d👧 ok 👍🏽"sv,
     "👩 👩 👧 ok 👍🏽"sv,
     {{0, 4}, {4, 7}, {7, 11}, {11, 14}, {14, 18}, {18, 19}, {19, 20}, {20, 21}, {21, 22}, {22, 26}, {26, 30}}},
    {"ภาษาไทย กำ"sv,
     "ภาษาไทย ก\u0e4dา"sv,
     {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 15}, {15, 18}, {18, 21}, {21, 22}, {22, 25}, {25, 28}, {25, 28}}},
    {"العربية ١٢٣ ﻻ"sv,
     "العربية ١٢٣ لا"sv,
     {{0, 2},
      {2, 4},
      {4, 6},
      {6, 8},
      {8, 10},
      {10, 12},
      {12, 14},
      {14, 15},
      {15, 17},
      {17, 19},
      {19, 21},
      {21, 22},
      {22, 25},
      {22, 25}}},
    {"\u200bstart\u200b \u200b\u200b"sv, " start "sv, {{0, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {15, 18}}},
    {"\011\012\015 x\000y\007z\177\u0085 \u00a0\u3000end"sv,
     " x\000yz\u0085 end"sv,
     {{3, 4}, {4, 5}, {5, 6}, {6, 7}, {8, 9}, {10, 12}, {15, 18}, {18, 19}, {19, 20}, {20, 21}}},
    {"a    b  \u3000 c"sv, "a b c"sv, {{0, 1}, {4, 5}, {5, 6}, {11, 12}, {12, 13}}},
    {"\ufeff\u00ad\u2028x"sv, " \u00ad x"sv, {{0, 3}, {3, 5}, {5, 8}, {8, 9}}},
    {"№ ™ ℃ ⅷ ㈱ ﷺ"sv,
     "No TM °C viii (株) صلى الله عليه وسلم"sv,
     {{0, 3},   {0, 3},   {3, 4},   {4, 7},   {4, 7},   {7, 8},   {8, 11},  {8, 11},  {11, 12},
      {12, 15}, {12, 15}, {12, 15}, {12, 15}, {15, 16}, {16, 19}, {16, 19}, {16, 19}, {19, 20},
      {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23},
      {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}, {20, 23}}},
};

TEST(PrecompiledCharsmap, XlmrNormalizesAsTokenizersDoes) {
  const std::string precompiled = xlmr_precompiled_json();
  ASSERT_GT(precompiled.size(), 300'000u);
  expect_cases(precompiled, kXlmrPrecompiled);
  expect_cases(R"({"type": "Sequence", "normalizers": [)" + precompiled +
                   R"(, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]})",
               kXlmrSequence);
}

TEST(PrecompiledCharsmap, XlmrLookups) {
  auto charsmap = PrecompiledCharsmap::from_base64(xlmr_charsmap_base64(), "normalizer.precompiled_charsmap");
  ASSERT_TRUE(charsmap.ok()) << charsmap.status().message();
  EXPECT_EQ(charsmap->replacement("ﬁ"), "fi");
  EXPECT_EQ(charsmap->replacement("①"), "1");
  EXPECT_EQ(charsmap->replacement("\u200b"), " ");
  EXPECT_EQ(charsmap->replacement("\x7f"), "");
  EXPECT_EQ(charsmap->replacement("a"), std::nullopt);
  EXPECT_EQ(charsmap->replacement(""), std::nullopt);
  EXPECT_EQ(charsmap->replacement("\0ﬁ"sv), std::nullopt);  // a lookup stops at NUL
}

// -- small charsmaps ---------------------------------------------------------------------------------------------

void append_le32(std::uint32_t value, std::string& out) {
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<char>((value >> (8 * k)) & 0xFF));
}

// A charsmap laid out as darts-clone lays one out, each trie node's children in a 256-unit block of its own:
// unit 0 points at the root's block; a unit for byte c of a node whose block starts at B sits at B ^ c, holds c,
// whether a key ends there, and the XOR distance to its own block, whose unit 0 holds the replacement's offset.
std::string charsmap_bytes(const std::vector<std::pair<std::string, std::string>>& rules) {
  constexpr std::uint32_t kBlock = 256;
  std::vector<std::uint32_t> units(2 * kBlock, 0);
  units[0] = kBlock << 10;
  std::map<std::string, std::uint32_t> block_of{{"", kBlock}};
  std::map<std::string, std::uint32_t> value_of;
  std::string strings;
  for (const auto& [key, replacement] : rules) {
    value_of[key] = static_cast<std::uint32_t>(strings.size());
    strings += replacement;
    strings.push_back('\0');
    for (std::size_t length = 1; length <= key.size(); ++length) {
      if (block_of.emplace(key.substr(0, length), static_cast<std::uint32_t>(units.size())).second) {
        units.resize(units.size() + kBlock, 0);
      }
    }
  }
  for (const auto& [prefix, block] : block_of) {
    if (prefix.empty()) continue;
    const auto byte = static_cast<unsigned char>(prefix.back());
    const std::uint32_t position = block_of[prefix.substr(0, prefix.size() - 1)] ^ byte;
    const bool leaf = value_of.contains(prefix);
    units[position] = byte | (leaf ? 1u << 8 : 0u) | ((position ^ block) << 10);
    if (leaf) units[block] = 0x80000000u | value_of[prefix];
  }
  std::string bytes;
  append_le32(static_cast<std::uint32_t>(units.size() * 4), bytes);
  for (const std::uint32_t unit : units) append_le32(unit, bytes);
  return bytes + strings;
}

PrecompiledCharsmap charsmap_of(const std::vector<std::pair<std::string, std::string>>& rules) {
  auto charsmap = PrecompiledCharsmap::from_bytes(charsmap_bytes(rules), "charsmap");
  EXPECT_TRUE(charsmap.ok()) << charsmap.status().message();
  return std::move(charsmap).value();
}

void expect_normalizes(const PrecompiledCharsmap& charsmap, const NormalizerCase& c) {
  SCOPED_TRACE(testing::Message() << "input \"" << c.input << "\"");
  NormalizedString text(c.input);
  charsmap.normalize(text);
  EXPECT_EQ(text.normalized(), c.expected);
  EXPECT_EQ(code_point_alignments(text), c.alignments);
}

TEST(PrecompiledCharsmap, TheShortestPrefixInTheTrieReplacesTheWholeGrapheme) {
  const PrecompiledCharsmap charsmap = charsmap_of({{"e", "1"}, {"e\u0301", "2"}});
  EXPECT_EQ(charsmap.replacement("e\u0301"), "1");
  // "e" + one accent is a 3-byte grapheme, replaced whole; with three accents it is 7 bytes, looked up code point
  // by code point.
  expect_normalizes(charsmap, {"e\u0301 e\u0301\u0301\u0301 e"sv,
                               "1 1\u0301\u0301\u0301 1"sv,
                               {{0, 1}, {3, 4}, {4, 5}, {5, 7}, {7, 9}, {9, 11}, {11, 12}, {12, 13}}});
}

TEST(PrecompiledCharsmap, ChangesInTheLengthMoveAlignmentsAsTokenizersDoes) {
  // Longer: the extra code points are inserted after the first.
  expect_normalizes(
      charsmap_of({{"x", "yz"}}),
      {"xab axb"sv, "yzab ayzb"sv, {{0, 1}, {0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {5, 6}, {6, 7}}});
  // Shorter: the removal is charged to the code point before, and lost at the very start, which shifts the
  // alignments after it (as tokenizers does).
  expect_normalizes(charsmap_of({{"x", ""}}), {"xab axb"sv, "ab ab"sv, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {5, 6}}});
  // Charged to an inserted code point, which then stands for the removed one.
  expect_normalizes(charsmap_of({{"x", "yz"}, {"q", ""}}), {"xqq"sv, "yz"sv, {{0, 1}, {1, 2}}});
  expect_normalizes(charsmap_of({{"\u00e9", "E"}}),
                    {"\u00e9\u0301 caf\u00e9"sv, "E cafE"sv, {{0, 2}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 10}}});
  // A NUL in the text matches nothing.
  expect_normalizes(charsmap_of({{"x", ""}}), {"\0x x\0"sv, "\0 \0"sv, {{0, 1}, {2, 3}, {4, 5}}});
}

// -- refusals ---------------------------------------------------------------------------------------------------

std::string refusal_of_bytes(const std::string& bytes) {
  auto charsmap = PrecompiledCharsmap::from_bytes(bytes, "normalizer.precompiled_charsmap");
  EXPECT_FALSE(charsmap.ok());
  if (charsmap.ok()) return {};
  EXPECT_EQ(charsmap.status().code(), Code::invalid_argument);
  EXPECT_NE(charsmap.status().message().find("normalizer.precompiled_charsmap"), std::string_view::npos);
  return std::string(charsmap.status().message());
}

void set_le32(std::string& bytes, std::size_t at, std::uint32_t value) {
  std::string encoded;
  append_le32(value, encoded);
  bytes.replace(at, 4, encoded);
}

TEST(PrecompiledCharsmap, RefusesBadBase64) {
  for (const std::string_view text : {"QUJD="sv, "QUJ"sv, "QU=D"sv, "QR=="sv, "QUJ*"sv, "QU JD"sv, ""sv}) {
    auto charsmap = PrecompiledCharsmap::from_base64(text, "normalizer.precompiled_charsmap");
    ASSERT_FALSE(charsmap.ok()) << text;
    EXPECT_EQ(charsmap.status().code(), Code::invalid_argument);
    EXPECT_NE(charsmap.status().message().find("normalizer.precompiled_charsmap"), std::string_view::npos);
  }
  const auto json = nlohmann::json::parse(R"({"type": "Precompiled", "precompiled_charsmap": "not base64!"})");
  auto normalizer = make_normalizer(json, "normalizer.normalizers[0]");
  ASSERT_FALSE(normalizer.ok());
  EXPECT_NE(normalizer.status().message().find("normalizer.normalizers[0].precompiled_charsmap"),
            std::string_view::npos);
}

TEST(PrecompiledCharsmap, RefusesATruncatedCharsmap) {
  const std::string valid = charsmap_bytes({{"x", "y"}});
  EXPECT_NE(refusal_of_bytes(valid.substr(0, 3)).find("header"), std::string::npos);
  EXPECT_NE(refusal_of_bytes(valid.substr(0, 4 + 100)).find("trie"), std::string::npos);
  std::string empty_trie;
  append_le32(0, empty_trie);
  EXPECT_NE(refusal_of_bytes(empty_trie).find("empty"), std::string::npos);
  // XLM-R's charsmap cut short.
  auto xlmr = nlohmann::json::parse(xlmr_precompiled_json());
  std::string cut = xlmr["precompiled_charsmap"];
  cut.resize(cut.size() / 2 / 4 * 4);
  xlmr["precompiled_charsmap"] = cut;
  auto normalizer = make_normalizer(xlmr, "normalizer");
  ASSERT_FALSE(normalizer.ok());
  EXPECT_NE(normalizer.status().message().find("normalizer.precompiled_charsmap"), std::string_view::npos);
}

TEST(PrecompiledCharsmap, RefusesTrieIndicesOutOfRange) {
  std::string bytes = charsmap_bytes({{"x", "y"}});
  // The root's block starts past the end.
  std::string root_past_end = bytes;
  set_le32(root_past_end, 4, 4096u << 10);
  EXPECT_NE(refusal_of_bytes(root_past_end).find("out of range"), std::string::npos);
  // The unit for "x" points its block past the end (the x unit is at 256 ^ 'x').
  std::string child_past_end = bytes;
  const std::size_t x_unit = 4 + 4 * (256 ^ 'x');
  set_le32(child_past_end, x_unit, static_cast<std::uint32_t>('x') | (1u << 8) | (0x3FFFFu << 10));
  EXPECT_NE(refusal_of_bytes(child_past_end).find("out of range"), std::string::npos);
  // A trie whose size is not whole blocks: the root's block runs past its end.
  std::string partial_block = bytes.substr(0, 4 + 4 * 300);
  set_le32(partial_block, 0, 4 * 300);
  EXPECT_NE(refusal_of_bytes(partial_block).find("out of range"), std::string::npos);
}

TEST(PrecompiledCharsmap, RefusesValuesThatDoNotStartAReplacement) {
  const std::string bytes = charsmap_bytes({{"x", "\u00e9"}});
  const std::size_t x_leaf = 4 + 4 * 512;  // the block of "x"
  std::string past_end = bytes;
  set_le32(past_end, x_leaf, 0x80000000u | 1000);
  EXPECT_NE(refusal_of_bytes(past_end).find("trie value 1000"), std::string::npos);
  std::string mid_code_point = bytes;
  set_le32(mid_code_point, x_leaf, 0x80000000u | 1);
  EXPECT_NE(refusal_of_bytes(mid_code_point).find("trie value 1"), std::string::npos);
  std::string not_utf8 = bytes;
  not_utf8.back() = '\xff';
  EXPECT_NE(refusal_of_bytes(not_utf8).find("UTF-8"), std::string::npos);
}

}  // namespace
}  // namespace accel::text

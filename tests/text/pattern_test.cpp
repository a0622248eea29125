// Pattern (PCRE2) against tokenizers 0.23.3's Oniguruma: the expected matches are what tokenizers' Split
// pre-tokenizer cut the same texts into (isolated and removed behaviors), on the classes where the two engines
// differ unless the expression is translated.
#include "text/tokenizer/pattern.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace accel::text {
namespace {

struct MatchCase {
  const char* expression;
  std::string text;
  std::vector<Range> matches;
};

TEST(Pattern, MatchesWhatOnigurumaMatches) {
  const std::vector<MatchCase> cases = {
      {R"(\s+)", "a\u180eb\u2028c\u0085 d", {{5, 8}, {9, 12}}},  // U+180E is not white space
      {R"(\S+)", "a\u180eb c", {{0, 5}, {6, 7}}},
      {R"([^\s\p{L}]+)", "a1\u180e!b", {{1, 6}}},
      {R"(\w+)", "x\u00b2\u00bd\u2167 e\u0301_\u24b6 \u0663!", {{0, 8}, {9, 16}, {17, 19}}},
      {R"([[:punct:]]+)", "a!\U0001f44d$b", {{1, 7}}},                 // Oniguruma's punct takes symbols
      {R"(\p{Han}+)", "\u6f22\u5b57\u3001\u4e2d", {{0, 6}, {9, 12}}},  // the Script, not Script_Extensions
      {R"(\b\w)", "ab c\u00b2d", {{0, 1}, {3, 4}}},
      {R"(\h+)", "12ab zz fF", {{0, 4}, {8, 10}}},  // \h is a hexadecimal digit
      {R"(\u0041+)", "AAB", {{0, 2}}},
      {R"(^a|a$)", "a\na ba\na", {{0, 1}, {2, 3}, {5, 6}, {7, 8}}},  // ^ and $ match at each line
      {R"((?i:'s|'t))", "'S 'T '\u017f", {{0, 2}, {3, 5}, {6, 9}}},
      {R"(\p{N}{1,3})", "1234567", {{0, 3}, {3, 6}, {6, 7}}},
      {R"(x*)", "abxxc", {{2, 4}}},  // find_all leaves out the empty matches
      {R"((?=b))", "abab", {}},
  };
  std::vector<Range> found;
  for (const MatchCase& c : cases) {
    SCOPED_TRACE(c.expression);
    const auto pattern = Pattern::regex(c.expression, "pattern");
    ASSERT_TRUE(pattern.ok()) << pattern.status().to_string();
    EXPECT_EQ(pattern->source(), c.expression);
    pattern->find_all(c.text, found);
    EXPECT_EQ(found, c.matches);
  }
}

std::vector<SplitPiece> pieces(const Pattern& pattern, std::string_view text, bool invert) {
  std::vector<SplitPiece> out;
  pattern.find_pieces(text, invert, out);
  return out;
}

// Empty matches still cut the text: tokenizers gives "a", "b", "xx", "c" for "x*" and "a", "ba", "b" for "(?=b)".
TEST(Pattern, PiecesKeepEmptyMatchesAsOnigurumasIteratorYieldsThem) {
  const auto stars = Pattern::regex("x*", "pattern");
  ASSERT_TRUE(stars.ok());
  EXPECT_EQ(pieces(*stars, "abxxc", false), (std::vector<SplitPiece>{{{0, 0}, true},
                                                                     {{0, 1}, false},
                                                                     {{1, 1}, true},
                                                                     {{1, 2}, false},
                                                                     {{2, 4}, true},
                                                                     {{4, 5}, false},
                                                                     {{5, 5}, true}}));
  const auto lookahead = Pattern::regex("(?=b)", "pattern");
  ASSERT_TRUE(lookahead.ok());
  EXPECT_EQ(
      pieces(*lookahead, "abab", true),
      (std::vector<SplitPiece>{{{0, 1}, true}, {{1, 1}, false}, {{1, 3}, true}, {{3, 3}, false}, {{3, 4}, true}}));
  // An empty match moves the search on by a whole code point.
  EXPECT_EQ(pieces(*stars, "é", false), (std::vector<SplitPiece>{{{0, 0}, true}, {{0, 2}, false}, {{2, 2}, true}}));
  EXPECT_EQ(pieces(*stars, "", false), (std::vector<SplitPiece>{{{0, 0}, false}}));
}

TEST(Pattern, LiteralsMatchTheirTextAndAnEmptyOneMatchesEverywhere) {
  const Pattern dash = Pattern::literal("--");
  std::vector<Range> found;
  dash.find_all("a---b--", found);
  EXPECT_EQ(found, (std::vector<Range>{{1, 3}, {5, 7}}));
  const Pattern dot = Pattern::literal(".*");  // not an expression
  dot.find_all("a.*b", found);
  EXPECT_EQ(found, (std::vector<Range>{{1, 3}}));
  const Pattern empty = Pattern::literal("");
  empty.find_all("ab", found);
  EXPECT_TRUE(found.empty());
  EXPECT_EQ(
      pieces(empty, "éb", false),
      (std::vector<SplitPiece>{{{0, 0}, true}, {{0, 2}, false}, {{2, 2}, true}, {{2, 3}, false}, {{3, 3}, true}}));
}

TEST(Pattern, FromJsonReadsStringOrRegex) {
  auto literal = Pattern::from_json(nlohmann::json::parse(R"({"String": "\\s"})"), "p");
  ASSERT_TRUE(literal.ok());
  std::vector<Range> found;
  literal->find_all("a\\sb c", found);
  EXPECT_EQ(found, (std::vector<Range>{{1, 3}}));
  auto regex = Pattern::from_json(nlohmann::json::parse(R"({"Regex": "\\s"})"), "p");
  ASSERT_TRUE(regex.ok());
  regex->find_all("a\\sb c", found);
  EXPECT_EQ(found, (std::vector<Range>{{4, 5}}));
}

TEST(Pattern, RefusesWhatItCannotRunFaithfully) {
  const std::vector<std::pair<const char*, const char*>> refusals = {
      {R"({"Regex": "("})", "p.Regex is \"(\"; not a regular expression we can run"},
      {R"({"Regex": "[a-z&&[^aeiou]]"})", "intersection"},
      {R"({"Regex": "[a[b]]"})", "nested character classes"},
      {R"({"Regex": "[\\W]"})", "inside a character class"},
      {R"({"Regex": "[[:graph:]]"})", "[:graph:]"},
      {R"({"Regex": 3})", "p.Regex is 3; expected a string"},
      {R"({"Glob": "*"})", "p is {\"Glob\":\"*\"}"},
      {R"({"String": "a", "Regex": "b"})", "expected {\"String\""},
      {R"("a")", "p is \"a\""},
  };
  for (const auto& [object, message] : refusals) {
    SCOPED_TRACE(object);
    const auto pattern = Pattern::from_json(nlohmann::json::parse(object), "p");
    ASSERT_FALSE(pattern.ok());
    EXPECT_EQ(pattern.code(), Code::invalid_argument);
    EXPECT_NE(pattern.status().to_string().find(message), std::string::npos) << pattern.status().to_string();
  }
}

}  // namespace
}  // namespace accel::text

// NormalizedString against HuggingFace tokenizers 0.23.3: every expected alignment below was printed by
// tokenizers' Python NormalizedString / PreTokenizedString (get_splits with original byte offsets, after
// splitting the normalized text into single code points).
#include "text/tokenizer/normalized_string.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

using Aligned = std::vector<std::pair<std::string, Range>>;

// Each normalized code point with the original range it stands for.
Aligned code_points(const NormalizedString& text) {
  Aligned out;
  const std::string& s = text.normalized();
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t begin = i;
    static_cast<void>(utf8::decode(s, i));
    out.emplace_back(s.substr(begin, i - begin), text.original_range(Range{begin, i}));
  }
  return out;
}

using Parts = std::vector<std::pair<std::string, Range>>;

Parts parts_of(const std::vector<NormalizedString>& parts) {
  Parts out;
  for (const NormalizedString& part : parts) out.emplace_back(part.normalized(), part.original_range());
  return out;
}

TEST(NormalizedString, ConstructorAlignsEachByteToItsCodePointShiftedByTheOffset) {
  const NormalizedString text("hé€😀", 10);
  EXPECT_EQ(text.normalized(), "hé€😀");
  EXPECT_EQ(text.original_range(), (Range{10, 20}));
  EXPECT_EQ(code_points(text), (Aligned{{"h", {10, 11}}, {"é", {11, 13}}, {"€", {13, 16}}, {"😀", {16, 20}}}));
  EXPECT_EQ(text.alignment(2), (Range{11, 13}));
  EXPECT_EQ(text.original_range(Range{1, 6}), (Range{11, 16}));
}

// Our own rule (normalized_string.hpp): tokenizers returns an empty range unconverted.
TEST(NormalizedString, EmptyRangesMapToThePositionTheyFallOn) {
  const NormalizedString text("aé", 4);
  EXPECT_EQ(text.original_range(Range{1, 1}), (Range{5, 5}));
  EXPECT_EQ(text.original_range(Range{3, 3}), (Range{7, 7}));
  const NormalizedString empty("", 4);
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.original_range(Range{0, 0}), (Range{4, 4}));
  EXPECT_EQ(empty.original_range(), (Range{4, 4}));
}

TEST(NormalizedString, LowercaseUsesTheFullMappingAndAlignsTheExtraCodePoint) {
  NormalizedString text("İstanbul ÉA");
  text.lowercase();
  EXPECT_EQ(text.normalized(), "i̇stanbul éa");
  EXPECT_EQ(code_points(text), (Aligned{{"i", {0, 2}},
                                        {"\u0307", {0, 2}},
                                        {"s", {2, 3}},
                                        {"t", {3, 4}},
                                        {"a", {4, 5}},
                                        {"n", {5, 6}},
                                        {"b", {6, 7}},
                                        {"u", {7, 8}},
                                        {"l", {8, 9}},
                                        {" ", {9, 10}},
                                        {"é", {10, 12}},
                                        {"a", {12, 13}}}));
}

// What tokenizers' nfd() does to "élégant": a decomposed mark stands for the same original code point.
TEST(NormalizedString, TransformInsertsAndRemovesCodePoints) {
  NormalizedString text("élégant");
  const std::vector<CodePointChange> nfd = {{U'e', 0}, {0x301, 1}, {U'l', 0}, {U'e', 0}, {0x301, 1},
                                            {U'g', 0}, {U'a', 0},  {U'n', 0}, {U't', 0}};
  text.transform(nfd, 0);
  EXPECT_EQ(code_points(text), (Aligned{{"e", {0, 2}},
                                        {"\u0301", {0, 2}},
                                        {"l", {2, 3}},
                                        {"e", {3, 5}},
                                        {"\u0301", {3, 5}},
                                        {"g", {5, 6}},
                                        {"a", {6, 7}},
                                        {"n", {7, 8}},
                                        {"t", {8, 9}}}));
  // tokenizers' filter() dropping the marks: each kept code point removes the marks after it.
  const std::vector<CodePointChange> filtered = {{U'e', -1}, {U'l', 0}, {U'e', -1}, {U'g', 0},
                                                 {U'a', 0},  {U'n', 0}, {U't', 0}};
  text.transform(filtered, 0);
  EXPECT_EQ(text.normalized(), "elegant");
  EXPECT_EQ(
      code_points(text),
      (Aligned{
          {"e", {0, 2}}, {"l", {2, 3}}, {"e", {3, 5}}, {"g", {5, 6}}, {"a", {6, 7}}, {"n", {7, 8}}, {"t", {8, 9}}}));
}

TEST(NormalizedString, TransformDropsInitialCodePoints) {
  NormalizedString text("\u0301\u0301ab\u0301");
  const std::vector<CodePointChange> kept = {{U'a', 0}, {U'b', -1}};
  text.transform(kept, 2);
  EXPECT_EQ(code_points(text), (Aligned{{"a", {4, 5}}, {"b", {5, 6}}}));
}

// Derived by hand from tokenizers' transform_range rule (an inserted code point copies the byte before it; at byte 0
// it gets the start of the string, (0, 0) in tokenizers' relative offsets).
TEST(NormalizedString, InsertionInsideARangeTakesTheAlignmentOfTheByteBeforeIt) {
  NormalizedString text("ab€d", 3);
  const std::vector<CodePointChange> changes = {{U'x', 1}, {U'y', 0}};
  text.transform(Range{2, 5}, changes, 0);  // replaces "€" by "xy": x inserted after "b", y stands for "€"
  EXPECT_EQ(code_points(text), (Aligned{{"a", {3, 4}}, {"b", {4, 5}}, {"x", {4, 5}}, {"y", {5, 8}}, {"d", {8, 9}}}));
  NormalizedString at_start("ab", 3);
  const std::vector<CodePointChange> inserted = {{U'_', 1}, {U'a', 0}};
  at_start.transform(Range{0, 1}, inserted, 0);
  EXPECT_EQ(code_points(at_start), (Aligned{{"_", {3, 3}}, {"a", {3, 4}}, {"b", {4, 5}}}));
}

TEST(NormalizedString, PrependAndAppendAlignToTheNeighbouringCodePoint) {
  // tokenizers: "ab cd" split on " " (removed), then each part prepend("▁▁") / append("!?").
  NormalizedString whole("ab cd");
  const std::vector<Range> space = {{2, 3}};
  std::vector<NormalizedString> parts = whole.split(space, SplitBehavior::removed);
  ASSERT_EQ(parts.size(), 2u);
  NormalizedString second_prepended = parts[1];
  second_prepended.prepend("▁▁");
  EXPECT_EQ(code_points(second_prepended), (Aligned{{"▁", {3, 4}}, {"▁", {3, 4}}, {"c", {3, 4}}, {"d", {4, 5}}}));
  parts[0].append("!?");
  EXPECT_EQ(code_points(parts[0]), (Aligned{{"a", {0, 1}}, {"b", {1, 2}}, {"!", {1, 2}}, {"?", {1, 2}}}));

  NormalizedString empty("", 7);
  empty.prepend("x");
  EXPECT_TRUE(empty.empty());
  empty.append("yz");
  EXPECT_EQ(code_points(empty), (Aligned{{"y", {7, 7}}, {"z", {7, 7}}}));
}

TEST(NormalizedString, StripRemovesUnicodeWhiteSpaceAtEitherEnd) {
  NormalizedString left(" \t\u00a0x y\n");
  left.strip(true, false);
  EXPECT_EQ(code_points(left), (Aligned{{"x", {4, 5}}, {" ", {5, 6}}, {"y", {6, 7}}, {"\n", {7, 8}}}));

  NormalizedString right(" \t\u00a0x y\u2028\n");
  right.strip(false, true);
  EXPECT_EQ(code_points(right),
            (Aligned{{" ", {0, 1}}, {"\t", {1, 2}}, {"\u00a0", {2, 4}}, {"x", {4, 5}}, {" ", {5, 6}}, {"y", {6, 7}}}));

  NormalizedString both("  a b\u3000");
  both.strip(true, true);
  EXPECT_EQ(code_points(both), (Aligned{{"a", {2, 3}}, {" ", {3, 4}}, {"b", {4, 5}}}));

  NormalizedString all(" \u3000 ");
  all.strip(true, true);
  EXPECT_TRUE(all.empty());

  // U+200B (zero width space) and U+180E are not White_Space.
  NormalizedString kept("\u200bx\u180e");
  kept.strip(true, true);
  EXPECT_EQ(kept.normalized(), "\u200bx\u180e");
}

TEST(NormalizedString, SliceKeepsAlignments) {
  NormalizedString text("aéb", 100);
  text.lowercase();
  const NormalizedString part = text.slice(Range{1, 4});
  EXPECT_EQ(part.normalized(), "éb");
  EXPECT_EQ(part.original_range(), (Range{101, 104}));
  EXPECT_EQ(code_points(part), (Aligned{{"é", {101, 103}}, {"b", {103, 104}}}));
}

struct BehaviorCase {
  SplitBehavior behavior;
  Parts trailing_dash;  // "the-final--countdown-"
  Parts leading_dash;   // "-the-final--countdown"
};

TEST(NormalizedString, SplitFollowsEachDelimiterBehavior) {
  const std::vector<BehaviorCase> cases = {
      {SplitBehavior::removed,
       {{"the", {0, 3}}, {"final", {4, 9}}, {"countdown", {11, 20}}},
       {{"the", {1, 4}}, {"final", {5, 10}}, {"countdown", {12, 21}}}},
      {SplitBehavior::isolated,
       {{"the", {0, 3}},
        {"-", {3, 4}},
        {"final", {4, 9}},
        {"-", {9, 10}},
        {"-", {10, 11}},
        {"countdown", {11, 20}},
        {"-", {20, 21}}},
       {{"-", {0, 1}},
        {"the", {1, 4}},
        {"-", {4, 5}},
        {"final", {5, 10}},
        {"-", {10, 11}},
        {"-", {11, 12}},
        {"countdown", {12, 21}}}},
      {SplitBehavior::merged_with_previous,
       {{"the-", {0, 4}}, {"final-", {4, 10}}, {"-", {10, 11}}, {"countdown-", {11, 21}}},
       {{"-", {0, 1}}, {"the-", {1, 5}}, {"final-", {5, 11}}, {"-", {11, 12}}, {"countdown", {12, 21}}}},
      {SplitBehavior::merged_with_next,
       {{"the", {0, 3}}, {"-final", {3, 9}}, {"-", {9, 10}}, {"-countdown", {10, 20}}, {"-", {20, 21}}},
       {{"-the", {0, 4}}, {"-final", {4, 10}}, {"-", {10, 11}}, {"-countdown", {11, 21}}}},
      {SplitBehavior::contiguous,
       {{"the", {0, 3}}, {"-", {3, 4}}, {"final", {4, 9}}, {"--", {9, 11}}, {"countdown", {11, 20}}, {"-", {20, 21}}},
       {{"-", {0, 1}}, {"the", {1, 4}}, {"-", {4, 5}}, {"final", {5, 10}}, {"--", {10, 12}}, {"countdown", {12, 21}}}},
  };
  const NormalizedString trailing("the-final--countdown-");
  const std::vector<Range> trailing_dashes = {{3, 4}, {9, 10}, {10, 11}, {20, 21}};
  const NormalizedString leading("-the-final--countdown");
  const std::vector<Range> leading_dashes = {{0, 1}, {4, 5}, {10, 11}, {11, 12}};
  for (const BehaviorCase& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.behavior));
    EXPECT_EQ(parts_of(trailing.split(trailing_dashes, c.behavior)), c.trailing_dash);
    EXPECT_EQ(parts_of(leading.split(leading_dashes, c.behavior)), c.leading_dash);
  }
}

// tokenizers' Split(Regex("[a-z]"), behavior, invert=True) on "ab-c--": each letter is an unmatched piece of its
// own, so adjacent letters stay apart unless the behavior joins them.
TEST(NormalizedString, SplitKeepsAdjacentUnmatchedPiecesApart) {
  const NormalizedString text("ab-c--");
  const std::vector<Range> letters = {{0, 1}, {1, 2}, {3, 4}};
  const std::vector<SplitPiece> pieces = split_pieces(text.size(), letters, true);
  ASSERT_EQ(pieces.size(), 5u);
  EXPECT_FALSE(pieces[0].matched);
  EXPECT_TRUE(pieces[2].matched);
  EXPECT_EQ(pieces[4].range, (Range{4, 6}));
  EXPECT_EQ(parts_of(text.split(pieces, SplitBehavior::removed)), (Parts{{"a", {0, 1}}, {"b", {1, 2}}, {"c", {3, 4}}}));
  EXPECT_EQ(parts_of(text.split(pieces, SplitBehavior::isolated)),
            (Parts{{"a", {0, 1}}, {"b", {1, 2}}, {"-", {2, 3}}, {"c", {3, 4}}, {"--", {4, 6}}}));
  EXPECT_EQ(parts_of(text.split(pieces, SplitBehavior::merged_with_previous)),
            (Parts{{"a", {0, 1}}, {"b-", {1, 3}}, {"c--", {3, 6}}}));
  EXPECT_EQ(parts_of(text.split(pieces, SplitBehavior::merged_with_next)),
            (Parts{{"a", {0, 1}}, {"b", {1, 2}}, {"-c", {2, 4}}, {"--", {4, 6}}}));
  EXPECT_EQ(parts_of(text.split(pieces, SplitBehavior::contiguous)),
            (Parts{{"ab", {0, 2}}, {"-", {2, 3}}, {"c", {3, 4}}, {"--", {4, 6}}}));
}

TEST(NormalizedString, SplitOfEmptyTextOrWithoutMatchesLeavesOutEmptyParts) {
  const NormalizedString empty("", 3);
  EXPECT_TRUE(empty.split(std::vector<Range>{}, SplitBehavior::isolated).empty());
  const NormalizedString text("abc", 3);
  EXPECT_EQ(parts_of(text.split(std::vector<Range>{}, SplitBehavior::removed)), (Parts{{"abc", {3, 6}}}));
  const std::vector<Range> everything = {{0, 3}};
  EXPECT_TRUE(text.split(everything, SplitBehavior::removed).empty());
}

TEST(NormalizedString, SplitPartsOfATransformedStringKeepOriginalOffsets) {
  NormalizedString text("ÀB CD", 5);
  text.lowercase();
  text.prepend("▁");  // aligned to "À"
  // "▁àb cd": split at the space (byte 6 of the normalized text), merged with the next part.
  const std::vector<Range> space = {{6, 7}};
  EXPECT_EQ(parts_of(text.split(space, SplitBehavior::merged_with_next)), (Parts{{"▁àb", {5, 8}}, {" cd", {8, 11}}}));
}

}  // namespace
}  // namespace accel::text

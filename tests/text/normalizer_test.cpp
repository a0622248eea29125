// The normalizers of a tokenizer.json against HuggingFace tokenizers 0.23.3: every expected text and alignment
// below was printed by tokenizers (see normalizer_expectations.hpp), and the refusals name the field at fault.
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

// Accents (composed and not), marks that canonical ordering moves (U+0323 before U+0307), decompositions into
// several marks (U+0344, U+0F73), Hangul syllables and conjoining jamo (U+11A7 is not a trailing jamo and must not
// compose), compatibility characters, CJK, an emoji ZWJ sequence, Thai, Arabic, singletons (U+212B, U+2126) and
// composition exclusions (U+0958, U+2ADC).
const std::vector<NormalizerCase> kNfc = {
    {""sv, ""sv, {}},
    {"Héllo Wörld"sv,
     "Héllo Wörld"sv,
     {{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 10}, {10, 11}, {11, 12}, {12, 13}}},
    {"e\u0301te\u0301"sv, "été"sv, {{0, 1}, {3, 4}, {4, 5}}},
    {"a\u0323\u0307 ḋ\u0323 q\u0307\u0323"sv,
     "ạ\u0307 ḍ\u0307 q\u0323\u0307"sv,
     {{0, 1}, {3, 5}, {5, 6}, {6, 9}, {9, 11}, {11, 12}, {12, 13}, {13, 15}, {15, 17}}},
    {"\u0344\u0f73"sv, "\u0f71\u0f72\u0308\u0301"sv, {{0, 2}, {0, 2}, {2, 5}, {2, 5}}},
    {"한국어 각 가ᆧ"sv,
     "한국어 각 가ᆧ"sv,
     {{0, 3}, {3, 6}, {6, 9}, {9, 10}, {10, 13}, {19, 20}, {20, 23}, {26, 29}}},
    {"ﬁ ① ｶﾞ ㌀ ¼ x²"sv,
     "ﬁ ① ｶﾞ ㌀ ¼ x²"sv,
     {{0, 3},
      {3, 4},
      {4, 7},
      {7, 8},
      {8, 11},
      {11, 14},
      {14, 15},
      {15, 18},
      {18, 19},
      {19, 21},
      {21, 22},
      {22, 23},
      {23, 25}}},
    {"中文字符 漢字"sv, "中文字符 漢字"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 13}, {13, 16}, {16, 19}}},
    {"👩\u200d👩\u200d👧 ok"sv,
     "👩\u200d👩\u200d👧 ok"sv,
     {{0, 4}, {4, 7}, {7, 11}, {11, 14}, {14, 18}, {18, 19}, {19, 20}, {20, 21}}},
    {"ภาษาไทย"sv, "ภาษาไทย"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 15}, {15, 18}, {18, 21}}},
    {"العربية ١٢٣ ﻻ"sv,
     "العربية ١٢٣ ﻻ"sv,
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
      {22, 25}}},
    {"ÅΩ क़ ⫝̸"sv, "ÅΩ क\u093c ⫝\u0338"sv, {{0, 3}, {3, 6}, {6, 7}, {7, 10}, {7, 10}, {10, 11}, {11, 14}, {11, 14}}},
};
const std::vector<NormalizerCase> kNfd = {
    {""sv, ""sv, {}},
    {"Héllo Wörld"sv,
     "He\u0301llo Wo\u0308rld"sv,
     {{0, 1}, {1, 3}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 10}, {8, 10}, {10, 11}, {11, 12}, {12, 13}}},
    {"e\u0301te\u0301"sv, "e\u0301te\u0301"sv, {{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 7}}},
    {"a\u0323\u0307 ḋ\u0323 q\u0307\u0323"sv,
     "a\u0323\u0307 d\u0323\u0307 q\u0323\u0307"sv,
     {{0, 1}, {1, 3}, {3, 5}, {5, 6}, {6, 9}, {9, 11}, {9, 11}, {11, 12}, {12, 13}, {13, 15}, {15, 17}}},
    {"\u0344\u0f73"sv, "\u0f71\u0f72\u0308\u0301"sv, {{0, 2}, {0, 2}, {2, 5}, {2, 5}}},
    {"한국어 각 가ᆧ"sv,
     "한국어 각 가ᆧ"sv,
     {{0, 3},
      {0, 3},
      {0, 3},
      {3, 6},
      {3, 6},
      {3, 6},
      {6, 9},
      {6, 9},
      {9, 10},
      {10, 13},
      {13, 16},
      {16, 19},
      {19, 20},
      {20, 23},
      {23, 26},
      {26, 29}}},
    {"ﬁ ① ｶﾞ ㌀ ¼ x²"sv,
     "ﬁ ① ｶﾞ ㌀ ¼ x²"sv,
     {{0, 3},
      {3, 4},
      {4, 7},
      {7, 8},
      {8, 11},
      {11, 14},
      {14, 15},
      {15, 18},
      {18, 19},
      {19, 21},
      {21, 22},
      {22, 23},
      {23, 25}}},
    {"中文字符 漢字"sv, "中文字符 漢字"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 13}, {13, 16}, {16, 19}}},
    {"👩\u200d👩\u200d👧 ok"sv,
     "👩\u200d👩\u200d👧 ok"sv,
     {{0, 4}, {4, 7}, {7, 11}, {11, 14}, {14, 18}, {18, 19}, {19, 20}, {20, 21}}},
    {"ภาษาไทย"sv, "ภาษาไทย"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 15}, {15, 18}, {18, 21}}},
    {"العربية ١٢٣ ﻻ"sv,
     "العربية ١٢٣ ﻻ"sv,
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
      {22, 25}}},
    {"ÅΩ क़ ⫝̸"sv,
     "A\u030aΩ क\u093c ⫝\u0338"sv,
     {{0, 3}, {0, 3}, {3, 6}, {6, 7}, {7, 10}, {7, 10}, {10, 11}, {11, 14}, {11, 14}}},
};
const std::vector<NormalizerCase> kNfkc = {
    {""sv, ""sv, {}},
    {"Héllo Wörld"sv,
     "Héllo Wörld"sv,
     {{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 10}, {10, 11}, {11, 12}, {12, 13}}},
    {"e\u0301te\u0301"sv, "été"sv, {{0, 1}, {3, 4}, {4, 5}}},
    {"a\u0323\u0307 ḋ\u0323 q\u0307\u0323"sv,
     "ạ\u0307 ḍ\u0307 q\u0323\u0307"sv,
     {{0, 1}, {3, 5}, {5, 6}, {6, 9}, {9, 11}, {11, 12}, {12, 13}, {13, 15}, {15, 17}}},
    {"\u0344\u0f73"sv, "\u0f71\u0f72\u0308\u0301"sv, {{0, 2}, {0, 2}, {2, 5}, {2, 5}}},
    {"한국어 각 가ᆧ"sv,
     "한국어 각 가ᆧ"sv,
     {{0, 3}, {3, 6}, {6, 9}, {9, 10}, {10, 13}, {19, 20}, {20, 23}, {26, 29}}},
    {"ﬁ ① ｶﾞ ㌀ ¼ x²"sv,
     "fi 1 ガ アパート 1⁄4 x2"sv,
     {{0, 3},
      {0, 3},
      {3, 4},
      {4, 7},
      {7, 8},
      {8, 11},
      {14, 15},
      {15, 18},
      {15, 18},
      {15, 18},
      {15, 18},
      {18, 19},
      {19, 21},
      {19, 21},
      {19, 21},
      {21, 22},
      {22, 23},
      {23, 25}}},
    {"中文字符 漢字"sv, "中文字符 漢字"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 13}, {13, 16}, {16, 19}}},
    {"👩\u200d👩\u200d👧 ok"sv,
     "👩\u200d👩\u200d👧 ok"sv,
     {{0, 4}, {4, 7}, {7, 11}, {11, 14}, {14, 18}, {18, 19}, {19, 20}, {20, 21}}},
    {"ภาษาไทย"sv, "ภาษาไทย"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 15}, {15, 18}, {18, 21}}},
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
    {"ÅΩ क़ ⫝̸"sv, "ÅΩ क\u093c ⫝\u0338"sv, {{0, 3}, {3, 6}, {6, 7}, {7, 10}, {7, 10}, {10, 11}, {11, 14}, {11, 14}}},
};
const std::vector<NormalizerCase> kNfkd = {
    {""sv, ""sv, {}},
    {"Héllo Wörld"sv,
     "He\u0301llo Wo\u0308rld"sv,
     {{0, 1}, {1, 3}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 10}, {8, 10}, {10, 11}, {11, 12}, {12, 13}}},
    {"e\u0301te\u0301"sv, "e\u0301te\u0301"sv, {{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 7}}},
    {"a\u0323\u0307 ḋ\u0323 q\u0307\u0323"sv,
     "a\u0323\u0307 d\u0323\u0307 q\u0323\u0307"sv,
     {{0, 1}, {1, 3}, {3, 5}, {5, 6}, {6, 9}, {9, 11}, {9, 11}, {11, 12}, {12, 13}, {13, 15}, {15, 17}}},
    {"\u0344\u0f73"sv, "\u0f71\u0f72\u0308\u0301"sv, {{0, 2}, {0, 2}, {2, 5}, {2, 5}}},
    {"한국어 각 가ᆧ"sv,
     "한국어 각 가ᆧ"sv,
     {{0, 3},
      {0, 3},
      {0, 3},
      {3, 6},
      {3, 6},
      {3, 6},
      {6, 9},
      {6, 9},
      {9, 10},
      {10, 13},
      {13, 16},
      {16, 19},
      {19, 20},
      {20, 23},
      {23, 26},
      {26, 29}}},
    {"ﬁ ① ｶﾞ ㌀ ¼ x²"sv,
     "fi 1 カ\u3099 アハ\u309aート 1⁄4 x2"sv,
     {{0, 3},   {0, 3},   {3, 4},   {4, 7},   {7, 8},   {8, 11},  {11, 14}, {14, 15}, {15, 18}, {15, 18},
      {15, 18}, {15, 18}, {15, 18}, {18, 19}, {19, 21}, {19, 21}, {19, 21}, {21, 22}, {22, 23}, {23, 25}}},
    {"中文字符 漢字"sv, "中文字符 漢字"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 13}, {13, 16}, {16, 19}}},
    {"👩\u200d👩\u200d👧 ok"sv,
     "👩\u200d👩\u200d👧 ok"sv,
     {{0, 4}, {4, 7}, {7, 11}, {11, 14}, {14, 18}, {18, 19}, {19, 20}, {20, 21}}},
    {"ภาษาไทย"sv, "ภาษาไทย"sv, {{0, 3}, {3, 6}, {6, 9}, {9, 12}, {12, 15}, {15, 18}, {18, 21}}},
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
    {"ÅΩ क़ ⫝̸"sv,
     "A\u030aΩ क\u093c ⫝\u0338"sv,
     {{0, 3}, {0, 3}, {3, 6}, {6, 7}, {7, 10}, {7, 10}, {10, 11}, {11, 14}, {11, 14}}},
};
const std::vector<NormalizerCase> kStripAccentsAfterNfd = {
    {"Héllo Wörld"sv,
     "Hello World"sv,
     {{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 10}, {10, 11}, {11, 12}, {12, 13}}},
    {"e\u0301\u0301x"sv, "ex"sv, {{0, 1}, {5, 6}}},
    {"\u0301abc"sv, "abc"sv, {{2, 3}, {3, 4}, {4, 5}}},
    {"क\u093e\u0902 ก\u0e34\u0e48"sv, "क ก"sv, {{0, 3}, {9, 10}, {10, 13}}},
};
const std::vector<NormalizerCase> kBertDefault = {
    {""sv, ""sv, {}},
    {"Héllo WÖRLD!"sv,
     "hello world!"sv,
     {{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 10}, {10, 11}, {11, 12}, {12, 13}, {13, 14}}},
    {"\011\012\015 a\013b\014c\u0085d"sv,
     "    abcd"sv,
     {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {6, 7}, {8, 9}, {11, 12}}},
    {"\000x�y\u200bz\u00ad\ue000"sv, "xyz"sv, {{1, 2}, {5, 6}, {9, 10}}},
    {"中文 字符a漢"sv,
     " 中  文   字  符 a 漢 "sv,
     {{0, 3},
      {0, 3},
      {0, 3},
      {3, 6},
      {3, 6},
      {3, 6},
      {6, 7},
      {7, 10},
      {7, 10},
      {7, 10},
      {10, 13},
      {10, 13},
      {10, 13},
      {13, 14},
      {14, 17},
      {14, 17},
      {14, 17}}},
    {"İstanbul ΣΑΣ ǅ"sv,
     "istanbul σασ ǆ"sv,
     {{0, 2},
      {2, 3},
      {3, 4},
      {4, 5},
      {5, 6},
      {6, 7},
      {7, 8},
      {8, 9},
      {9, 10},
      {10, 12},
      {12, 14},
      {14, 16},
      {16, 17},
      {17, 19}}},
    {"\u2003x\u3000y\u00a0"sv, " x y "sv, {{0, 3}, {3, 4}, {4, 7}, {7, 8}, {8, 10}}},
    {"👩\u200d👧 ﬁ"sv, "👩👧 ﬁ"sv, {{0, 4}, {7, 11}, {11, 12}, {12, 15}}},
    {"\u0301\u0301start"sv, "start"sv, {{4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}}},
};
const std::vector<NormalizerCase> kBertCased = {
    {""sv, ""sv, {}},
    {"Héllo WÖRLD!"sv,
     "Héllo WÖRLD!"sv,
     {{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 10}, {10, 11}, {11, 12}, {12, 13}, {13, 14}}},
    {"\011\012\015 a\013b\014c\u0085d"sv,
     "    abcd"sv,
     {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {6, 7}, {8, 9}, {11, 12}}},
    {"\000x�y\u200bz\u00ad\ue000"sv, "xyz"sv, {{1, 2}, {5, 6}, {9, 10}}},
    {"中文 字符a漢"sv,
     " 中  文   字  符 a 漢 "sv,
     {{0, 3},
      {0, 3},
      {0, 3},
      {3, 6},
      {3, 6},
      {3, 6},
      {6, 7},
      {7, 10},
      {7, 10},
      {7, 10},
      {10, 13},
      {10, 13},
      {10, 13},
      {13, 14},
      {14, 17},
      {14, 17},
      {14, 17}}},
    {"İstanbul ΣΑΣ ǅ"sv,
     "İstanbul ΣΑΣ ǅ"sv,
     {{0, 2},
      {2, 3},
      {3, 4},
      {4, 5},
      {5, 6},
      {6, 7},
      {7, 8},
      {8, 9},
      {9, 10},
      {10, 12},
      {12, 14},
      {14, 16},
      {16, 17},
      {17, 19}}},
    {"\u2003x\u3000y\u00a0"sv, " x y "sv, {{0, 3}, {3, 4}, {4, 7}, {7, 8}, {8, 10}}},
    {"👩\u200d👧 ﬁ"sv, "👩👧 ﬁ"sv, {{0, 4}, {7, 11}, {11, 12}, {12, 15}}},
    {"\u0301\u0301start"sv, "\u0301\u0301start"sv, {{0, 2}, {2, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}}},
};
const std::vector<NormalizerCase> kBertStripNoLower = {
    {""sv, ""sv, {}},
    {"Héllo WÖRLD!"sv,
     "Hello WORLD!"sv,
     {{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 10}, {10, 11}, {11, 12}, {12, 13}, {13, 14}}},
    {"\011\012\015 a\013b\014c\u0085d"sv,
     "\011\012\015 a\013b\014c\u0085d"sv,
     {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 11}, {11, 12}}},
    {"\000x�y\u200bz\u00ad\ue000"sv,
     "\000x�y\u200bz\u00ad\ue000"sv,
     {{0, 1}, {1, 2}, {2, 5}, {5, 6}, {6, 9}, {9, 10}, {10, 12}, {12, 15}}},
    {"中文 字符a漢"sv, "中文 字符a漢"sv, {{0, 3}, {3, 6}, {6, 7}, {7, 10}, {10, 13}, {13, 14}, {14, 17}}},
    {"İstanbul ΣΑΣ ǅ"sv,
     "Istanbul ΣΑΣ ǅ"sv,
     {{0, 2},
      {2, 3},
      {3, 4},
      {4, 5},
      {5, 6},
      {6, 7},
      {7, 8},
      {8, 9},
      {9, 10},
      {10, 12},
      {12, 14},
      {14, 16},
      {16, 17},
      {17, 19}}},
    {"\u2003x\u3000y\u00a0"sv, "\u2003x\u3000y\u00a0"sv, {{0, 3}, {3, 4}, {4, 7}, {7, 8}, {8, 10}}},
    {"👩\u200d👧 ﬁ"sv, "👩\u200d👧 ﬁ"sv, {{0, 4}, {4, 7}, {7, 11}, {11, 12}, {12, 15}}},
    {"\u0301\u0301start"sv, "start"sv, {{4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}}},
};
const std::vector<NormalizerCase> kStripBoth = {
    {""sv, ""sv, {}},
    {"   "sv, ""sv, {}},
    {"  a b  "sv, "a b"sv, {{2, 3}, {3, 4}, {4, 5}}},
    {"\u3000\011x\012\u00a0"sv, "x"sv, {{4, 5}}},
    {"x"sv, "x"sv, {{0, 1}}},
};
const std::vector<NormalizerCase> kStripLeft = {
    {"  a b  "sv, "a b  "sv, {{2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}}},
    {"\u2003é "sv, "é "sv, {{3, 5}, {5, 6}}},
};
const std::vector<NormalizerCase> kReplaceString = {
    {""sv, ""sv, {}},
    {"a b  c   "sv, "a▁b▁▁c▁▁▁"sv, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}}},
    {"   "sv, "▁▁▁"sv, {{0, 1}, {1, 2}, {2, 3}}},
    {"no"sv, "no"sv, {{0, 1}, {1, 2}}},
};
const std::vector<NormalizerCase> kReplaceRegexRuns = {
    {"a  b   c"sv, "a b c"sv, {{0, 1}, {2, 3}, {3, 4}, {6, 7}, {7, 8}}},
    {"    "sv, " "sv, {{3, 4}}},
    {" x  "sv, " x "sv, {{0, 1}, {1, 2}, {3, 4}}},
};
const std::vector<NormalizerCase> kReplaceToEmpty = {
    {"education"sv, "dctn"sv, {{1, 2}, {3, 4}, {5, 6}, {8, 9}}},
    {"xyz"sv, "xyz"sv, {{0, 1}, {1, 2}, {2, 3}}},
    {"aaa b"sv, " b"sv, {{3, 4}, {4, 5}}},
};
const std::vector<NormalizerCase> kReplaceLonger = {
    {"abab ab"sv, "XYZXYZ XYZ"sv, {{1, 2}, {1, 2}, {1, 2}, {3, 4}, {3, 4}, {3, 4}, {4, 5}, {6, 7}, {6, 7}, {6, 7}}},
    {"aabb"sv, "aXYZb"sv, {{0, 1}, {2, 3}, {2, 3}, {2, 3}, {3, 4}}},
    {"ab"sv, "XYZ"sv, {{1, 2}, {1, 2}, {1, 2}}},
};
const std::vector<NormalizerCase> kReplaceAdjacentMultiByte = {
    {"éüé x ü"sv,
     "<><><> x <>"sv,
     {{0, 2}, {0, 2}, {2, 4}, {2, 4}, {4, 6}, {4, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 11}, {9, 11}}},
    {"éé"sv, "<><>"sv, {{0, 2}, {0, 2}, {2, 4}, {2, 4}}},
};
const std::vector<NormalizerCase> kPrependLowercase = {
    {""sv, ""sv, {}},
    {"Hello World"sv,
     "▁hello world"sv,
     {{0, 1}, {0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 10}, {10, 11}}},
    {"İ"sv, "▁i\u0307"sv, {{0, 2}, {0, 2}, {0, 2}}},
};

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

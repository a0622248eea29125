// all-MiniLM-L6-v2's tokenizer.json (BERT's WordPiece) through accel::text::Tokenizer as the embedding model runs
// it: truncated at 256, never padded, against the ids HuggingFace tokenizers 0.23.3 gives a corpus of 10,531 texts
// (tests/text/make_minilm_golden.py), and what the model relies on around them: special tokens, truncation,
// invalid UTF-8, batches. The model folder comes from scripts/setup (or ACCEL_MODEL_DIR at run time).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "accel/text/tokenizer.hpp"
#include "testing/model_folder.hpp"
#include "testing/status_matchers.hpp"

namespace accel::text {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using testing::IsOk;
using testing::StatusIs;

const std::filesystem::path kModelFolder = testing::model_folder(ACCEL_TEST_MODEL_FOLDER);

constexpr std::int32_t kCls = 101;
constexpr std::int32_t kSep = 102;

// The model's tokenizer, loaded once for the file: the vocabulary takes a moment.
const Result<Tokenizer>& minilm() {
  static const auto tokenizer = Tokenizer::load(kModelFolder / "tokenizer.json");
  return tokenizer;
}

// Skips where the model folder is absent (scripts/setup fetches it); a tokenizer.json missing from a folder that is
// there, or failing to load, fails.
#define REQUIRE_MINILM()                           \
  do {                                             \
    ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kModelFolder); \
    ASSERT_THAT(minilm(), IsOk());                 \
  } while (false)

EncodeOptions at_most(std::size_t max_length) { return {.max_length = max_length}; }

struct GoldenText {
  std::string text;
  std::vector<std::int32_t> ids;
  bool truncated = false;
};

std::vector<GoldenText> read_golden(json& header) {
  std::ifstream in(ACCEL_MINILM_GOLDEN);
  std::string line;
  std::getline(in, line);
  header = json::parse(line);
  std::vector<GoldenText> golden;
  while (std::getline(in, line)) {
    const json entry = json::parse(line);
    golden.push_back({.text = entry.at("text").get<std::string>(),
                      .ids = entry.at("ids").get<std::vector<std::int32_t>>(),
                      .truncated = entry.value("truncated", false)});
  }
  return golden;
}

std::string escaped(std::string_view text) { return json(text).dump(-1, ' ', false, json::error_handler_t::replace); }

TEST(MiniLmTokenizer, AgreesWithHuggingFaceTokenizersOnEveryGoldenText) {
  REQUIRE_MINILM();
  json header;
  const std::vector<GoldenText> golden = read_golden(header);
  ASSERT_EQ(golden.size(), header.at("texts").get<std::size_t>());
  ASSERT_GE(golden.size(), 10000U);
  const EncodeOptions options = at_most(header.at("max_length").get<std::size_t>());

  std::vector<std::string> texts;
  for (const GoldenText& g : golden) texts.push_back(g.text);
  const auto batch = minilm()->encode_batch(texts, options, 4);
  ASSERT_THAT(batch, IsOk());
  std::size_t disagreements = 0;
  for (std::size_t i = 0; i < golden.size(); ++i) {
    const auto single = minilm()->encode(golden[i].text, options);
    ASSERT_THAT(single, IsOk());
    const bool agree = single->ids == golden[i].ids && single->truncated == golden[i].truncated &&
                       (*batch)[i].ids == golden[i].ids && (*batch)[i].truncated == golden[i].truncated;
    if (!agree && ++disagreements <= 10) {
      ADD_FAILURE() << "text " << i << " " << escaped(golden[i].text) << "\n  tokenizers "
                    << header.at("tokenizers").get<std::string>() << ": " << json(golden[i].ids).dump()
                    << (golden[i].truncated ? " (truncated)" : "") << "\n  accel: " << json(single->ids).dump()
                    << (single->truncated ? " (truncated)" : "");
    }
  }
  EXPECT_EQ(disagreements, 0U) << "of " << golden.size() << " texts";
}

// Expected ids in the tests below: tokenizers 0.23.3 with the same tokenizer.json.

TEST(MiniLmTokenizer, EncodesTheEmptyTextAsClsSep) {
  REQUIRE_MINILM();
  EXPECT_EQ(minilm()->token_to_id("[CLS]"), kCls);
  EXPECT_EQ(minilm()->token_to_id("[SEP]"), kSep);
  const auto encoding = minilm()->encode("", at_most(256));
  ASSERT_THAT(encoding, IsOk());
  EXPECT_THAT(encoding->ids, ElementsAre(kCls, kSep));
  EXPECT_FALSE(encoding->truncated);
}

TEST(MiniLmTokenizer, CutsAddedTokensOutOfTheRawText) {
  REQUIRE_MINILM();
  const auto encoding = minilm()->encode("hello[MASK]world", at_most(256));
  ASSERT_THAT(encoding, IsOk());
  EXPECT_THAT(encoding->ids, ElementsAre(kCls, 7592, 103, 2088, kSep));
}

TEST(MiniLmTokenizer, TruncatesSoTheWholeSequenceFitsMaxLength) {
  REQUIRE_MINILM();
  auto words = [](std::size_t n) {
    std::string text;
    for (std::size_t i = 0; i < n; ++i) text += "a ";
    return text;
  };
  const auto fits = minilm()->encode(words(254), at_most(256));
  ASSERT_THAT(fits, IsOk());
  EXPECT_EQ(fits->ids.size(), 256U);
  EXPECT_FALSE(fits->truncated);
  const auto cut = minilm()->encode(words(255), at_most(256));
  ASSERT_THAT(cut, IsOk());
  EXPECT_EQ(cut->ids.size(), 256U);
  EXPECT_TRUE(cut->truncated);
  EXPECT_EQ(cut->ids.back(), kSep);
  const auto tiny = minilm()->encode("a b", at_most(3));
  ASSERT_THAT(tiny, IsOk());
  EXPECT_THAT(tiny->ids, ElementsAre(kCls, 1037, kSep));
  EXPECT_TRUE(tiny->truncated);
  // tokenizers gives [CLS][SEP] for max_length 2; accel refuses a max_length that leaves no room for a token.
  EXPECT_THAT(minilm()->encode("a", at_most(2)), StatusIs(Code::invalid_argument, "max_length 2"));
}

TEST(MiniLmTokenizer, RefusesInvalidUtf8NamingTheByte) {
  REQUIRE_MINILM();
  EXPECT_THAT(minilm()->encode("ab\xff", at_most(256)), StatusIs(Code::invalid_argument, "byte 2"));
  for (const char* bad : {"\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\x80"}) {
    EXPECT_THAT(minilm()->encode(bad, at_most(256)), StatusIs(Code::invalid_argument, "not valid UTF-8"))
        << escaped(bad);
  }
}

TEST(MiniLmTokenizer, BatchKeepsInputOrderAndNamesTheLowestInvalidIndex) {
  REQUIRE_MINILM();
  std::mt19937 rng(7);
  std::vector<std::string> texts;
  for (int i = 0; i < 1000; ++i) texts.push_back("text " + std::to_string(rng()) + std::string(i % 50, 'x'));
  const auto batch = minilm()->encode_batch(texts, at_most(16), 3);
  ASSERT_THAT(batch, IsOk());
  ASSERT_EQ(batch->size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ((*batch)[i].ids, minilm()->encode(texts[i], at_most(16))->ids) << i;
  }

  // 16 threads over 200 texts take blocks of one text (at least 8 blocks a thread): the same ids in the same order,
  // and the lowest invalid index named.
  std::vector<std::string> few(texts.begin(), texts.begin() + 200);
  const auto small_blocks = minilm()->encode_batch(few, at_most(16), 16);
  ASSERT_THAT(small_blocks, IsOk());
  ASSERT_EQ(small_blocks->size(), few.size());
  for (std::size_t i = 0; i < few.size(); ++i) EXPECT_EQ((*small_blocks)[i].ids, (*batch)[i].ids) << i;
  few[170] = "\xfe";
  few[33] = "ok \xff";
  EXPECT_THAT(minilm()->encode_batch(few, at_most(16), 16), StatusIs(Code::invalid_argument, "text 33"));

  texts[900] = "\xfe";
  texts[517] = "ok \xff";
  EXPECT_THAT(minilm()->encode_batch(texts, at_most(16), 4), StatusIs(Code::invalid_argument, "text 517"));
  EXPECT_THAT(minilm()->encode_batch(texts, at_most(16), 1), StatusIs(Code::invalid_argument, "text 517"));
  EXPECT_THAT(minilm()->encode_batch({}, at_most(16), 4), IsOk());
}

TEST(MiniLmTokenizer, EncodePairsEqualsEachPairAloneOnEveryThreadCount) {
  REQUIRE_MINILM();
  std::mt19937 rng(13);
  std::vector<std::string> passages;
  for (int i = 0; i < 300; ++i) passages.push_back("passage " + std::to_string(rng()) + std::string(i % 40, 'y'));
  const std::string query = "which passage is it?";
  for (unsigned threads : {1U, 3U}) {
    const auto pairs = minilm()->encode_pairs(query, passages, at_most(24), threads);
    ASSERT_THAT(pairs, IsOk());
    ASSERT_EQ(pairs->size(), passages.size());
    for (std::size_t i = 0; i < passages.size(); ++i) {
      const auto alone = minilm()->encode_pair(query, passages[i], at_most(24));
      EXPECT_EQ((*pairs)[i].ids, alone->ids) << i;
      EXPECT_EQ((*pairs)[i].type_ids, alone->type_ids) << i;
    }
  }
  passages[250] = "\xfe";
  passages[101] = "bad \xff";
  EXPECT_THAT(minilm()->encode_pairs(query, passages, at_most(24), 4), StatusIs(Code::invalid_argument, "pair 101"));
}

TEST(MiniLmTokenizer, NeverCrashesOnRandomBytes) {
  REQUIRE_MINILM();
  std::mt19937 rng(11);
  for (int i = 0; i < 2000; ++i) {
    std::string text(rng() % 64, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 3 == 0 ? rng() % 0x80 : 0x80 + rng() % 0x80);
    const auto encoding = minilm()->encode(text, at_most(64));
    if (encoding.ok()) {
      EXPECT_LE(encoding->ids.size(), 64U);
    } else {
      EXPECT_THAT(encoding, StatusIs(Code::invalid_argument, "not valid UTF-8"));
    }
  }
}

TEST(MiniLmTokenizer, LoadNamesAMissingFile) {
  EXPECT_THAT(Tokenizer::load("/nonexistent/tokenizer.json"),
              StatusIs(Code::invalid_argument, "/nonexistent/tokenizer.json"));
}

// -- a tiny BERT tokenizer.json ------------------------------------------------------------------------------------

json tiny_tokenizer() {
  return json::parse(R"({
    "version": "1.0",
    "added_tokens": [
      {"id": 1, "content": "[CLS]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false,
       "special": true},
      {"id": 2, "content": "[SEP]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false,
       "special": true}],
    "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                   "strip_accents": null, "lowercase": true},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
      "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
               {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
      "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]},
                         "[SEP]": {"id": "[SEP]", "ids": [2], "tokens": ["[SEP]"]}}},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 5,
              "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "un": 3, "##aff": 4, "##able": 5, ",": 6, "e": 7,
                        "##e": 8, "É": 9, "ß": 10, "##ß": 11}}
  })");
}

std::vector<std::int32_t> tiny_ids(const json& tokenizer, std::string_view text) {
  const auto loaded = Tokenizer::from_json(tokenizer.dump());
  if (!loaded.ok()) {
    ADD_FAILURE() << loaded.status().to_string();
    return {};
  }
  const auto encoding = loaded->encode(text, at_most(64));
  if (!encoding.ok()) {
    ADD_FAILURE() << escaped(text) << ": " << encoding.status().to_string();
    return {};
  }
  return encoding->ids;
}

// Expected ids: tokenizers 0.23.3 with the same documents.
TEST(MiniLmTokenizer, ReadsATinyBertTokenizer) {
  EXPECT_THAT(tiny_ids(tiny_tokenizer(), "unaff, É"), ElementsAre(1, 3, 4, 6, 7, 2));
  // max_input_chars_per_word (5) counts characters, not bytes.
  EXPECT_THAT(tiny_ids(tiny_tokenizer(), "ßßßßß ßßßßßß"), ElementsAre(1, 10, 11, 11, 11, 11, 0, 2));
  json cased = tiny_tokenizer();
  cased["normalizer"]["lowercase"] = false;  // and strip_accents (null) follows it
  EXPECT_THAT(tiny_ids(cased, "É"), ElementsAre(1, 9, 2));
  json bert = tiny_tokenizer();
  bert["post_processor"] = json::parse(R"({"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]})");
  EXPECT_THAT(tiny_ids(bert, "un"), ElementsAre(1, 3, 2));
}

TEST(MiniLmTokenizer, NeverCrashesOnMutationsOfATinyBertTokenizer) {
  // Every value of the document replaced by every kind of value: a named error or a tokenizer that encodes.
  const json tokenizer = tiny_tokenizer();
  const json flat = tokenizer.flatten();
  const json kinds = json::array({nullptr, true, 0, -1, 1.5, "x", json::array(), json::object()});
  for (const auto& [pointer, unused] : flat.items()) {
    for (const json& kind : kinds) {
      json mutated = tokenizer;
      mutated[json::json_pointer(pointer)] = kind;
      const auto loaded = Tokenizer::from_json(mutated.dump());
      if (!loaded.ok()) {
        EXPECT_THAT(loaded, StatusIs(Code::invalid_argument, "tokenizer.json")) << pointer << " = " << kind.dump();
        continue;
      }
      EXPECT_THAT(loaded->encode("unaff, É ßß 中", at_most(64)), IsOk()) << pointer << " = " << kind.dump();
    }
  }
}

}  // namespace
}  // namespace accel::text

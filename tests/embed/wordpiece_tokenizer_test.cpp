#include "embed/wordpiece_tokenizer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "testing/model_folder.hpp"
#include "testing/status_matchers.hpp"

namespace accel::embed {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using testing::IsOk;
using testing::StatusIs;

const std::filesystem::path kModelFolder = testing::model_folder(ACCEL_DEFAULT_MODEL_DIR);

std::filesystem::path tokenizer_json() { return kModelFolder / "tokenizer.json"; }

// The model's tokenizer, loaded once for the file: the vocabulary takes a moment.
const Result<WordPieceTokenizer>& minilm() {
  static const auto tokenizer = WordPieceTokenizer::load(tokenizer_json());
  return tokenizer;
}

// Skips where the model folder is absent (scripts/setup fetches it); a tokenizer.json missing from a folder that is
// there, or failing to load, fails.
#define REQUIRE_MINILM()                           \
  do {                                             \
    ACCEL_SKIP_WITHOUT_MODEL_FOLDER(kModelFolder); \
    ASSERT_THAT(minilm(), IsOk());                 \
  } while (false)

struct GoldenText {
  std::string text;
  std::vector<std::int32_t> ids;
  bool truncated = false;
};

std::vector<GoldenText> read_golden(json& header) {
  std::ifstream in(ACCEL_TOKENIZER_GOLDEN);
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

std::string escaped(const std::string& text) { return json(text).dump(); }

TEST(WordPieceTokenizer, AgreesWithHuggingFaceTokenizersOnEveryGoldenText) {
  REQUIRE_MINILM();
  json header;
  const std::vector<GoldenText> golden = read_golden(header);
  ASSERT_EQ(golden.size(), header.at("texts").get<std::size_t>());
  ASSERT_GE(golden.size(), 10000U);
  const auto max_length = header.at("max_length").get<std::size_t>();

  std::vector<std::string> texts;
  for (const GoldenText& g : golden) texts.push_back(g.text);
  const auto batch = minilm()->encode_batch(texts, max_length, 4);
  ASSERT_THAT(batch, IsOk());
  std::size_t disagreements = 0;
  for (std::size_t i = 0; i < golden.size(); ++i) {
    const auto single = minilm()->encode(golden[i].text, max_length);
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

TEST(WordPieceTokenizer, EncodesTheEmptyTextAsClsSep) {
  REQUIRE_MINILM();
  const auto encoding = minilm()->encode("", 256);
  ASSERT_THAT(encoding, IsOk());
  EXPECT_THAT(encoding->ids, ElementsAre(minilm()->cls_id(), minilm()->sep_id()));
  EXPECT_FALSE(encoding->truncated);
}

TEST(WordPieceTokenizer, CutsAddedTokensOutOfTheRawText) {
  REQUIRE_MINILM();
  const auto encoding = minilm()->encode("hello[MASK]world", 256);
  ASSERT_THAT(encoding, IsOk());
  EXPECT_THAT(encoding->ids, ElementsAre(101, 7592, 103, 2088, 102));
}

TEST(WordPieceTokenizer, TruncatesSoTheWholeSequenceFitsMaxLength) {
  REQUIRE_MINILM();
  auto words = [](std::size_t n) {
    std::string text;
    for (std::size_t i = 0; i < n; ++i) text += "a ";
    return text;
  };
  const auto fits = minilm()->encode(words(254), 256);
  ASSERT_THAT(fits, IsOk());
  EXPECT_EQ(fits->ids.size(), 256U);
  EXPECT_FALSE(fits->truncated);
  const auto cut = minilm()->encode(words(255), 256);
  ASSERT_THAT(cut, IsOk());
  EXPECT_EQ(cut->ids.size(), 256U);
  EXPECT_TRUE(cut->truncated);
  EXPECT_EQ(cut->ids.back(), minilm()->sep_id());
  const auto tiny = minilm()->encode("a", 2);
  ASSERT_THAT(tiny, IsOk());
  EXPECT_THAT(tiny->ids, ElementsAre(101, 102));
  EXPECT_TRUE(tiny->truncated);
  EXPECT_THAT(minilm()->encode("a", 1), StatusIs(Code::invalid_argument, "max_length 1"));
}

TEST(WordPieceTokenizer, RefusesInvalidUtf8NamingTheByte) {
  REQUIRE_MINILM();
  EXPECT_THAT(minilm()->encode("ab\xff", 256), StatusIs(Code::invalid_argument, "byte 2"));
  for (const char* bad : {"\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\x80"}) {
    EXPECT_THAT(minilm()->encode(bad, 256), StatusIs(Code::invalid_argument, "not valid UTF-8")) << escaped(bad);
  }
}

TEST(WordPieceTokenizer, BatchKeepsInputOrderAndNamesTheLowestInvalidIndex) {
  REQUIRE_MINILM();
  std::mt19937 rng(7);
  std::vector<std::string> texts;
  for (int i = 0; i < 1000; ++i) texts.push_back("text " + std::to_string(rng()) + std::string(i % 50, 'x'));
  const auto batch = minilm()->encode_batch(texts, 16, 3);
  ASSERT_THAT(batch, IsOk());
  ASSERT_EQ(batch->size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) EXPECT_EQ((*batch)[i].ids, minilm()->encode(texts[i], 16)->ids);

  texts[900] = "\xfe";
  texts[517] = "ok \xff";
  EXPECT_THAT(minilm()->encode_batch(texts, 16, 4), StatusIs(Code::invalid_argument, "text 517"));
  EXPECT_THAT(minilm()->encode_batch(texts, 16, 1), StatusIs(Code::invalid_argument, "text 517"));
  EXPECT_THAT(minilm()->encode_batch({}, 16, 4), IsOk());
}

TEST(WordPieceTokenizer, NeverCrashesOnRandomBytes) {
  REQUIRE_MINILM();
  std::mt19937 rng(11);
  for (int i = 0; i < 2000; ++i) {
    std::string text(rng() % 64, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 3 == 0 ? rng() % 0x80 : 0x80 + rng() % 0x80);
    const auto encoding = minilm()->encode(text, 64);
    if (!encoding.ok()) {
      EXPECT_THAT(encoding, StatusIs(Code::invalid_argument, "not valid UTF-8"));
    }
  }
}

// -- tokenizer.json fixtures -------------------------------------------------------------------------------

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
      "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]},
                         "[SEP]": {"id": "[SEP]", "ids": [2], "tokens": ["[SEP]"]}}},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 5,
              "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "un": 3, "##aff": 4, "##able": 5, ",": 6, "e": 7,
                        "##e": 8, "É": 9, "ß": 10, "##ß": 11}}
  })");
}

Result<std::vector<std::int32_t>> tiny_ids(const json& tokenizer, std::string_view text) {
  ACCEL_ASSIGN_OR_RETURN(const WordPieceTokenizer t, WordPieceTokenizer::from_json(tokenizer.dump()));
  ACCEL_ASSIGN_OR_RETURN(Encoding e, t.encode(text, 64));
  return e.ids;
}

TEST(WordPieceTokenizerConfig, ReadsATinyTokenizer) {
  EXPECT_THAT(*tiny_ids(tiny_tokenizer(), "unaff, É"), ElementsAre(1, 3, 4, 6, 7, 2));
  // max_input_chars_per_word (5) counts characters, not bytes.
  EXPECT_THAT(*tiny_ids(tiny_tokenizer(), "ßßßßß ßßßßßß"), ElementsAre(1, 10, 11, 11, 11, 11, 0, 2));
  json cased = tiny_tokenizer();
  cased["normalizer"]["lowercase"] = false;  // and strip_accents (null) follows it
  EXPECT_THAT(*tiny_ids(cased, "É"), ElementsAre(1, 9, 2));
  json bert = tiny_tokenizer();
  bert["post_processor"] = json::parse(R"({"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]})");
  EXPECT_THAT(*tiny_ids(bert, "un"), ElementsAre(1, 3, 2));
}

TEST(WordPieceTokenizerConfig, RefusesWhatItDoesNotSupportNamingFieldAndValue) {
  auto refused = [](const char* pointer, json value, const std::string& mention) {
    json tokenizer = tiny_tokenizer();
    tokenizer[json::json_pointer(pointer)] = std::move(value);
    EXPECT_THAT(WordPieceTokenizer::from_json(tokenizer.dump()), StatusIs(Code::invalid_argument, mention)) << pointer;
  };
  refused("/normalizer/type", "Lowercase", "normalizer.type is \"Lowercase\"");
  refused("/normalizer", nullptr, "normalizer is null");
  refused("/pre_tokenizer/type", "Whitespace", "pre_tokenizer.type is \"Whitespace\"");
  refused("/model/type", "BPE", "model.type is \"BPE\"");
  refused("/post_processor/type", "RobertaProcessing", "post_processor.type is \"RobertaProcessing\"");
  refused("/post_processor/single/1/Sequence/id", "B", "post_processor.single");
  refused("/post_processor/special_tokens/[CLS]/ids", json::array({1, 2}), "special_tokens.[CLS].ids");
  refused("/added_tokens/1/normalized", true, "added_tokens[1].normalized is true");
  refused("/added_tokens/0/lstrip", true, "added_tokens[0].lstrip");
  refused("/model/unk_token", "<unk>", "'<unk>' is not in the vocabulary");
  refused("/model/vocab/un", "three", "model.vocab[\"un\"] is \"three\"");
  refused("/model/vocab/un", -3, "model.vocab[\"un\"] is -3");
  refused("/model/max_input_chars_per_word", -1, "model.max_input_chars_per_word is -1");
  refused("/normalizer/strip_accents", "yes", "normalizer.strip_accents is \"yes\"");
}

TEST(WordPieceTokenizerConfig, NamesMissingFields) {
  for (const char* pointer : {"/model/vocab", "/normalizer/lowercase", "/post_processor", "/added_tokens",
                              "/model/continuing_subword_prefix", "/added_tokens/0/id"}) {
    json tokenizer = tiny_tokenizer();
    const json::json_pointer path(pointer);
    tokenizer[path.parent_pointer()].erase(path.back());
    std::string name = std::string(pointer + 1);
    std::replace(name.begin(), name.end(), '/', '.');
    if (name == "added_tokens.0.id") name = "added_tokens[0].id";
    EXPECT_THAT(WordPieceTokenizer::from_json(tokenizer.dump()),
                StatusIs(Code::invalid_argument, name + " is missing"));
  }
}

TEST(WordPieceTokenizerConfig, RefusesMalformedJsonAndNeverCrashesOnMutations) {
  for (const char* bad : {"", "{", "[1, 2", "null", "\"text\"", "{\"model\": }", "\xff\xfe"}) {
    EXPECT_THAT(WordPieceTokenizer::from_json(bad), StatusIs(Code::invalid_argument)) << escaped(bad);
  }
  // Every value of the fixture replaced by every kind of value: a named error or a tokenizer, never a crash.
  const json tokenizer = tiny_tokenizer();
  const json flat = tokenizer.flatten();
  const json kinds = json::array({nullptr, true, 0, -1, 1.5, "x", json::array(), json::object()});
  for (const auto& [pointer, unused] : flat.items()) {
    for (const json& kind : kinds) {
      json mutated = tokenizer;
      mutated[json::json_pointer(pointer)] = kind;
      const auto loaded = WordPieceTokenizer::from_json(mutated.dump());
      if (!loaded.ok()) {
        EXPECT_THAT(loaded, StatusIs(Code::invalid_argument, "tokenizer.json")) << pointer;
      }
    }
  }
}

TEST(WordPieceTokenizerConfig, LoadNamesAMissingFile) {
  EXPECT_THAT(WordPieceTokenizer::load("/nonexistent/tokenizer.json"),
              StatusIs(Code::invalid_argument, "/nonexistent/tokenizer.json"));
}

}  // namespace
}  // namespace accel::embed

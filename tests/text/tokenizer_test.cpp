// Whole tokenizer.json documents against HuggingFace tokenizers 0.23.3: small BERT (WordPiece, TemplateProcessing)
// and RoBERTa (byte-level BPE, RobertaProcessing) tokenizers built in Python with tokenizers 0.23.3 and serialised
// with to_str(); the expected encodings (tokenizer_cases.inc) were printed by the same script (character offsets
// converted to bytes).
// Special tokens' sequence ids, which tokenizers leaves unset, are not compared here (post_processor_test does).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "accel/text/tokenizer.hpp"
#include "text/expected_encoding.hpp"

namespace accel::text {

namespace {

using expected_encoding::Expected;
using expected_encoding::kNone;

struct Case {
  std::string text;
  std::optional<std::string> pair;
  EncodeOptions options;
  bool truncated = false;
  Expected expected;
};

#include "tokenizer_cases.inc"

std::optional<Tokenizer> load(const char* document) {
  auto tokenizer = Tokenizer::from_json(document);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  if (!tokenizer.ok()) return std::nullopt;
  return std::move(*tokenizer);
}

void expect_encoding(const Encoding& actual, const Expected& expected, bool truncated, const std::string& what) {
  EXPECT_EQ(actual.ids, expected.ids) << what;
  EXPECT_EQ(actual.type_ids, expected.type_ids) << what;
  EXPECT_EQ(actual.tokens, expected.tokens) << what;
  EXPECT_EQ(actual.offsets, expected.offsets) << what;
  EXPECT_EQ(actual.special_tokens_mask, expected.special) << what;
  EXPECT_EQ(actual.truncated, truncated) << what;
  ASSERT_EQ(actual.sequence_ids.size(), expected.sequence.size()) << what;
  for (std::size_t i = 0; i < expected.sequence.size(); ++i) {
    if (expected.sequence[i] != kNone) {
      EXPECT_EQ(actual.sequence_ids[i], expected.sequence[i]) << what << " token " << i;
    }
  }
}

void expect_cases(const char* document, const std::vector<Case>& cases) {
  const std::optional<Tokenizer> tokenizer = load(document);
  ASSERT_TRUE(tokenizer.has_value());
  for (const Case& c : cases) {
    const std::string what =
        c.text + (c.pair ? " | " + *c.pair : "") + " max_length " + std::to_string(c.options.max_length);
    auto encoding = c.pair ? tokenizer->encode_pair(c.text, *c.pair, c.options) : tokenizer->encode(c.text, c.options);
    ASSERT_TRUE(encoding.ok()) << what << ": " << encoding.status().message();
    expect_encoding(*encoding, c.expected, c.truncated, what);
  }
}

TEST(TokenizerTest, BertWordPieceWithTemplate) { expect_cases(kBert, kBertCases); }
TEST(TokenizerTest, BertWithLstripRstripSingleWordAndNormalizedAddedTokens) {
  expect_cases(kBertWithAddedTokens, kBertAddedTokenCases);
}
TEST(TokenizerTest, RobertaByteLevelBpe) { expect_cases(kRoberta, kRobertaCases); }

TEST(TokenizerTest, WithoutAPostProcessorAPairIsConcatenated) {
  // tokenizers 0.23.3 with the BERT document's post_processor set to None: "Hello, world!" | "the cats".
  std::string document = kBert;
  const std::size_t at = document.find("\"post_processor\":{");
  ASSERT_NE(at, std::string::npos);
  const std::size_t end = document.find("\"decoder\"", at);
  document.replace(at, end - at, "\"post_processor\":null,");
  const std::optional<Tokenizer> tokenizer = load(document.c_str());
  ASSERT_TRUE(tokenizer.has_value());
  auto encoding = tokenizer->encode_pair("Hello, world!", "the cats");
  ASSERT_TRUE(encoding.ok()) << encoding.status().message();
  expect_encoding(*encoding,
                  {.ids = {5, 16, 6, 18, 7, 8, 9},
                   .type_ids = {0, 0, 0, 0, 1, 1, 1},
                   .tokens = {"hello", ",", "world", "!", "the", "cat", "##s"},
                   .offsets = {{0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 3}, {4, 7}, {7, 8}},
                   .special = {0, 0, 0, 0, 0, 0, 0},
                   .sequence = {0, 0, 0, 0, 1, 1, 1}},
                  false, "no post-processor");
}

TEST(TokenizerTest, EncodeBatchKeepsOrderAndNamesTheFirstBadText) {
  const std::optional<Tokenizer> tokenizer = load(kBert);
  ASSERT_TRUE(tokenizer.has_value());
  std::vector<std::string> texts;
  for (int i = 0; i < 100; ++i) texts.push_back(i % 3 == 0 ? "Hello, world!" : "the cats sat on the mat");
  auto batch = tokenizer->encode_batch(texts, {.max_length = 6}, 4);
  ASSERT_TRUE(batch.ok()) << batch.status().message();
  ASSERT_EQ(batch->size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    auto single = tokenizer->encode(texts[i], {.max_length = 6});
    ASSERT_TRUE(single.ok());
    EXPECT_EQ((*batch)[i].ids, single->ids) << i;
    EXPECT_EQ((*batch)[i].offsets, single->offsets) << i;
  }
  texts[77] = "bad \xff";
  texts[41] = "bad \xc3";
  auto failed = tokenizer->encode_batch(texts, {}, 4);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "text 41: the text is not valid UTF-8 (byte 4)");
  auto none = tokenizer->encode_batch(std::vector<std::string>{}, {}, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(TokenizerTest, LooksUpTokensAndDescribesItself) {
  const std::optional<Tokenizer> bert = load(kBertWithAddedTokens);
  ASSERT_TRUE(bert.has_value());
  EXPECT_EQ(bert->token_to_id("[CLS]"), 2);
  EXPECT_EQ(bert->token_to_id("cat"), 8);
  EXPECT_EQ(bert->token_to_id("Yes"), 39);  // added after the 38-token vocabulary, as tokenizers numbers it
  EXPECT_EQ(bert->token_to_id("nope"), std::nullopt);
  EXPECT_EQ(bert->id_to_token(39), "yes");  // tokenizers 0.23.3 gives a normalized added token's normalized form
  EXPECT_EQ(bert->id_to_token(9), "##s");
  EXPECT_EQ(bert->id_to_token(1000), std::nullopt);
  EXPECT_EQ(bert->vocabulary_size(), 42U);  // tokenizers 0.23.3's get_vocab_size()
  EXPECT_EQ(bert->describe(),
            "normalizer=BertNormalizer pre_tokenizer=BertPreTokenizer model=WordPiece(38) "
            "post_processor=TemplateProcessing added_tokens=9");
  const std::optional<Tokenizer> roberta = load(kRoberta);
  ASSERT_TRUE(roberta.has_value());
  EXPECT_EQ(roberta->vocabulary_size(), 300U);
}

// The BERT document with `from` replaced by `to` (which must be found).
std::string edited(const std::string& from, const std::string& to) {
  std::string document = kBert;
  const std::size_t at = document.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) document.replace(at, from.size(), to);
  return document;
}

void expect_refused(const std::string& document, const std::string& part) {
  auto tokenizer = Tokenizer::from_json(document);
  ASSERT_FALSE(tokenizer.ok()) << part;
  EXPECT_EQ(tokenizer.code(), Code::invalid_argument);
  EXPECT_NE(tokenizer.status().message().find(part), std::string::npos) << tokenizer.status().message();
}

TEST(TokenizerTest, RefusesUnknownComponentTypesInEachStage) {
  expect_refused(edited(R"("normalizer":{"type":"BertNormalizer")", R"("normalizer":{"type":"Shout")"),
                 "normalizer.type is \"Shout\"");
  expect_refused(edited(R"("pre_tokenizer":{"type":"BertPreTokenizer")", R"("pre_tokenizer":{"type":"Chop")"),
                 "pre_tokenizer.type is \"Chop\"");
  expect_refused(edited(R"("model":{"type":"WordPiece")", R"("model":{"type":"WordLevel")"),
                 "model.type is \"WordLevel\"");
  expect_refused(edited(R"("post_processor":{"type":"TemplateProcessing")", R"("post_processor":{"type":"Glue")"),
                 "post_processor.type is \"Glue\"");
}

TEST(TokenizerTest, RefusesMalformedDocuments) {
  expect_refused("{\"model\": ", "tokenizer.json: not valid JSON");
  expect_refused("[1, 2]", "tokenizer.json: the document is [1,2]; expected an object");
  expect_refused(edited(R"("model":{"type":"WordPiece")", R"("mode":{"type":"WordPiece")"), "model is missing");
  expect_refused(edited(R"("version":"1.0")", R"("version":"2.0")"), "version is \"2.0\"");
  expect_refused(edited(R"("added_tokens":[)", R"("added_tokens":7,"x":[)"), "added_tokens is 7");
  // [MASK] is the model's token 4; a file that says 5 means something tokenizers would not do.
  expect_refused(edited(R"({"id":4,"content":"[MASK]")", R"({"id":5,"content":"[MASK]")"),
                 "added_tokens[4].id is 5; \"[MASK]\" is the model's token 4");
  expect_refused(edited(R"("single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},)",
                        R"("single_word":false,"lstrip":false,"rstrip":false,"special":true},)"),
                 "added_tokens[0].normalized is missing");
  expect_refused(edited(R"("[SEP]":{"id":"[SEP]","ids":[3])", R"("[SEP]":{"id":"[SEP]","ids":[30])"),
                 "the vocabulary gives \"[SEP]\" the id 3");
}

TEST(TokenizerTest, RefusesAnAddedTokenNumberedOtherwiseThanTokenizersWould) {
  const std::string extra = R"({"id":40,"content":"<new>","single_word":false,"lstrip":false,"rstrip":false,)"
                            R"("normalized":false,"special":true},)";
  expect_refused(edited(R"("added_tokens":[)", R"("added_tokens":[)" + extra),
                 "added_tokens[0].id is 40; tokenizers numbers new added tokens from the end of the model's "
                 "vocabulary: this one is 38");
  const std::string colliding = R"({"id":5,"content":"<new>","single_word":false,"lstrip":false,"rstrip":false,)"
                                R"("normalized":false,"special":true},)";
  expect_refused(edited(R"("added_tokens":[)", R"("added_tokens":[)" + colliding),
                 "added_tokens[0].id is 5; the id is the model's token \"hello\"");
}

TEST(TokenizerTest, RefusesInvalidTextAndATooSmallMaxLength) {
  const std::optional<Tokenizer> tokenizer = load(kBert);
  ASSERT_TRUE(tokenizer.has_value());
  auto bad = tokenizer->encode("ok \xe2\x82");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "the text is not valid UTF-8 (byte 3)");
  auto bad_pair = tokenizer->encode_pair("fine", "\xed\xa0\x80 surrogate");
  ASSERT_FALSE(bad_pair.ok());
  EXPECT_EQ(bad_pair.status().message(), "the second text is not valid UTF-8 (byte 0)");
  auto small = tokenizer->encode("hello", {.max_length = 2});
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.code(), Code::invalid_argument);
  EXPECT_EQ(small.status().message(), "max_length 2 leaves no room for a token beside 2 special tokens");
  EXPECT_FALSE(tokenizer->encode_pair("a", "b", {.max_length = 3}).ok());
  EXPECT_TRUE(tokenizer->encode_pair("a", "b", {.max_length = 4}).ok());
  EXPECT_TRUE(tokenizer->encode("hello", {.add_special_tokens = false, .max_length = 1}).ok());
}

TEST(TokenizerTest, LoadNamesTheFile) {
  const auto missing = std::filesystem::temp_directory_path() / "accel-no-such-dir" / "tokenizer.json";
  auto tokenizer = Tokenizer::load(missing);
  ASSERT_FALSE(tokenizer.ok());
  EXPECT_NE(tokenizer.status().message().find(missing.string()), std::string::npos);
  EXPECT_NE(tokenizer.status().message().find("no such file"), std::string::npos);
}

}  // namespace
}  // namespace accel::text

// The post-processors against HuggingFace tokenizers 0.23.3: each case feeds the processor the tokens tokenizers'
// own pipeline gave (with no post-processor) and expects what tokenizers gave with it; the values were printed by a
// Python script with tokenizers 0.23.3 (character offsets converted to bytes). Sequence ids of special tokens are
// ours (tokenizers leaves them unset) and are checked on their own.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "accel/text/tokenizer.hpp"
#include "text/tokenizer/components.hpp"

namespace accel::text {

void PrintTo(const Range& range, std::ostream* out) { *out << "{" << range.begin << ", " << range.end << "}"; }

namespace {

constexpr std::uint32_t kNone = 255;  // tokenizers gives no sequence id

struct Expected {
  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> type_ids;
  std::vector<std::string> tokens;
  std::vector<Range> offsets;
  std::vector<std::uint8_t> special;
  std::vector<std::uint32_t> sequence;
};

// The special tokens the cases' processors name, as the vocabulary knows them.
const Vocabulary& vocabulary() {
  static const Vocabulary kVocabulary{
      .model = nullptr, .added = {{"<s>", 0}, {"</s>", 2}, {"[CLS]", 2}, {"[SEP]", 3}, {"hello", 5}, {"world", 6}}};
  return kVocabulary;
}

Result<std::unique_ptr<PostProcessor>> make(const std::string& text) {
  return make_post_processor(nlohmann::json::parse(text), "post_processor", vocabulary());
}

// A sequence as the tokenizer hands it to the post-processor.
Encoding as_sequence(const Expected& tokens, std::uint32_t sequence) {
  Encoding encoding;
  encoding.ids = tokens.ids;
  encoding.tokens = tokens.tokens;
  encoding.offsets = tokens.offsets;
  encoding.type_ids.assign(tokens.ids.size(), static_cast<std::int32_t>(sequence));
  encoding.special_tokens_mask.assign(tokens.ids.size(), 0);
  encoding.sequence_ids.assign(tokens.ids.size(), sequence);
  return encoding;
}

Encoding processed(const std::string& processor_json, const Expected& first, const Expected* second,
                   bool add_special_tokens) {
  auto processor = make(processor_json);
  EXPECT_TRUE(processor.ok()) << processor.status().message();
  if (!processor.ok()) return {};
  Encoding encoding = as_sequence(first, 0);
  const Encoding pair = second != nullptr ? as_sequence(*second, 1) : Encoding{};
  (*processor)->process(encoding, second != nullptr ? &pair : nullptr, add_special_tokens);
  return encoding;
}

void expect_processed(const std::string& processor_json, const Expected& first, const Expected* second,
                      bool add_special_tokens, const Expected& expected) {
  const Encoding actual = processed(processor_json, first, second, add_special_tokens);
  EXPECT_EQ(actual.ids, expected.ids);
  EXPECT_EQ(actual.type_ids, expected.type_ids);
  EXPECT_EQ(actual.tokens, expected.tokens);
  EXPECT_EQ(actual.offsets, expected.offsets);
  EXPECT_EQ(actual.special_tokens_mask, expected.special);
  ASSERT_EQ(actual.sequence_ids.size(), expected.sequence.size());
  for (std::size_t i = 0; i < expected.sequence.size(); ++i) {
    if (expected.sequence[i] != kNone) {
      EXPECT_EQ(actual.sequence_ids[i], expected.sequence[i]) << "token " << i;
    }
  }
  EXPECT_FALSE(actual.truncated);
}

TEST(PostProcessorTest, RobertaTrimsByteLevelSpaces) {
  // tokenizers 0.23.3 on '  Hello  world, there!  '
  const std::string processor =
      R"json({"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":true,"add_prefix_space":false})json";
  const Expected input0{
      .ids = {225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",", "\xc4\xa0t", "here", "!",
                 "\xc4\xa0\xc4\xa0"},
      .offsets = {{0, 1}, {1, 2}, {2, 4}, {4, 7}, {7, 8}, {8, 14}, {14, 15}, {15, 17}, {17, 21}, {21, 22}, {22, 24}},
      .special = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
  const Expected expected{.ids = {0, 225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279, 2},
                          .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                          .tokens = {"<s>", "\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",",
                                     "\xc4\xa0t", "here", "!", "\xc4\xa0\xc4\xa0", "</s>"},
                          .offsets = {{0, 0},
                                      {1, 1},
                                      {2, 2},
                                      {2, 4},
                                      {4, 7},
                                      {8, 8},
                                      {9, 14},
                                      {14, 15},
                                      {16, 17},
                                      {17, 21},
                                      {21, 22},
                                      {24, 24},
                                      {0, 0}},
                          .special = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
                          .sequence = {kNone, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, kNone}};
  expect_processed(processor, input0, nullptr, true, expected);
}

TEST(PostProcessorTest, RobertaKeepsTheFirstPrefixSpace) {
  // tokenizers 0.23.3 on '  Hello  world, there!  '
  const std::string processor =
      R"json({"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":true,"add_prefix_space":true})json";
  const Expected input0{
      .ids = {225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",", "\xc4\xa0t", "here", "!",
                 "\xc4\xa0\xc4\xa0"},
      .offsets = {{0, 1}, {1, 2}, {2, 4}, {4, 7}, {7, 8}, {8, 14}, {14, 15}, {15, 17}, {17, 21}, {21, 22}, {22, 24}},
      .special = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
  const Expected expected{.ids = {0, 225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279, 2},
                          .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                          .tokens = {"<s>", "\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",",
                                     "\xc4\xa0t", "here", "!", "\xc4\xa0\xc4\xa0", "</s>"},
                          .offsets = {{0, 0},
                                      {0, 0},
                                      {2, 2},
                                      {2, 4},
                                      {4, 7},
                                      {8, 8},
                                      {9, 14},
                                      {14, 15},
                                      {16, 17},
                                      {17, 21},
                                      {21, 22},
                                      {24, 24},
                                      {0, 0}},
                          .special = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
                          .sequence = {kNone, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, kNone}};
  expect_processed(processor, input0, nullptr, true, expected);
}

TEST(PostProcessorTest, RobertaUntrimmed) {
  // tokenizers 0.23.3 on '  Hello  world, there!  '
  const std::string processor =
      R"json({"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":false,"add_prefix_space":true})json";
  const Expected input0{
      .ids = {225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",", "\xc4\xa0t", "here", "!",
                 "\xc4\xa0\xc4\xa0"},
      .offsets = {{0, 1}, {1, 2}, {2, 4}, {4, 7}, {7, 8}, {8, 14}, {14, 15}, {15, 17}, {17, 21}, {21, 22}, {22, 24}},
      .special = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
  const Expected expected{.ids = {0, 225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279, 2},
                          .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                          .tokens = {"<s>", "\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",",
                                     "\xc4\xa0t", "here", "!", "\xc4\xa0\xc4\xa0", "</s>"},
                          .offsets = {{0, 0},
                                      {0, 1},
                                      {1, 2},
                                      {2, 4},
                                      {4, 7},
                                      {7, 8},
                                      {8, 14},
                                      {14, 15},
                                      {15, 17},
                                      {17, 21},
                                      {21, 22},
                                      {22, 24},
                                      {0, 0}},
                          .special = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
                          .sequence = {kNone, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, kNone}};
  expect_processed(processor, input0, nullptr, true, expected);
}

TEST(PostProcessorTest, RobertaPair) {
  // tokenizers 0.23.3 on '  Hello  world, there!  ', ' hello\u3000there'
  const std::string processor =
      R"json({"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":true,"add_prefix_space":false})json";
  const Expected input0{
      .ids = {225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",", "\xc4\xa0t", "here", "!",
                 "\xc4\xa0\xc4\xa0"},
      .offsets = {{0, 1}, {1, 2}, {2, 4}, {4, 7}, {7, 8}, {8, 14}, {14, 15}, {15, 17}, {17, 21}, {21, 22}, {22, 24}},
      .special = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
  const Expected input1{.ids = {280, 164, 227, 227, 88, 282},
                        .type_ids = {0, 0, 0, 0, 0, 0},
                        .tokens = {"\xc4\xa0hello", "\xc3\xa3", "\xc4\xa2", "\xc4\xa2", "t", "here"},
                        .offsets = {{0, 6}, {6, 9}, {6, 9}, {6, 9}, {9, 10}, {10, 14}},
                        .special = {0, 0, 0, 0, 0, 0}};
  const Expected expected{
      .ids = {0, 225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279, 2, 2, 280, 164, 227, 227, 88, 282, 2},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"<s>",      "\xc4\xa0",         "\xc4\xa0", "He",        "llo",
                 "\xc4\xa0", "\xc4\xa0world",    ",",        "\xc4\xa0t", "here",
                 "!",        "\xc4\xa0\xc4\xa0", "</s>",     "</s>",      "\xc4\xa0hello",
                 "\xc3\xa3", "\xc4\xa2",         "\xc4\xa2", "t",         "here",
                 "</s>"},
      .offsets = {{0, 0},   {1, 1}, {2, 2}, {2, 4}, {4, 7}, {8, 8}, {9, 14}, {14, 15}, {16, 17}, {17, 21}, {21, 22},
                  {24, 24}, {0, 0}, {0, 0}, {1, 6}, {6, 9}, {6, 9}, {6, 9},  {9, 10},  {10, 14}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, kNone, kNone, 1, 1, 1, 1, 1, 1, kNone}};
  expect_processed(processor, input0, &input1, true, expected);
}

TEST(PostProcessorTest, RobertaPairWithoutSpecialTokens) {
  // tokenizers 0.23.3 on '  Hello  world, there!  ', ' hello\u3000there'
  const std::string processor =
      R"json({"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":true,"add_prefix_space":false})json";
  const Expected input0{
      .ids = {225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",", "\xc4\xa0t", "here", "!",
                 "\xc4\xa0\xc4\xa0"},
      .offsets = {{0, 1}, {1, 2}, {2, 4}, {4, 7}, {7, 8}, {8, 14}, {14, 15}, {15, 17}, {17, 21}, {21, 22}, {22, 24}},
      .special = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
  const Expected input1{.ids = {280, 164, 227, 227, 88, 282},
                        .type_ids = {0, 0, 0, 0, 0, 0},
                        .tokens = {"\xc4\xa0hello", "\xc3\xa3", "\xc4\xa2", "\xc4\xa2", "t", "here"},
                        .offsets = {{0, 6}, {6, 9}, {6, 9}, {6, 9}, {9, 10}, {10, 14}},
                        .special = {0, 0, 0, 0, 0, 0}};
  const Expected expected{
      .ids = {225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279, 280, 164, 227, 227, 88, 282},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",", "\xc4\xa0t", "here", "!",
                 "\xc4\xa0\xc4\xa0", "\xc4\xa0hello", "\xc3\xa3", "\xc4\xa2", "\xc4\xa2", "t", "here"},
      .offsets = {{1, 1},
                  {2, 2},
                  {2, 4},
                  {4, 7},
                  {8, 8},
                  {9, 14},
                  {14, 15},
                  {16, 17},
                  {17, 21},
                  {21, 22},
                  {24, 24},
                  {1, 6},
                  {6, 9},
                  {6, 9},
                  {6, 9},
                  {9, 10},
                  {10, 14}},
      .special = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .sequence = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}};
  expect_processed(processor, input0, &input1, false, expected);
}

TEST(PostProcessorTest, ByteLevelPair) {
  // tokenizers 0.23.3 on '  Hello  world, there!  ', ' hello\u3000there'
  const std::string processor =
      R"json({"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true})json";
  const Expected input0{
      .ids = {225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",", "\xc4\xa0t", "here", "!",
                 "\xc4\xa0\xc4\xa0"},
      .offsets = {{0, 1}, {1, 2}, {2, 4}, {4, 7}, {7, 8}, {8, 14}, {14, 15}, {15, 17}, {17, 21}, {21, 22}, {22, 24}},
      .special = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
  const Expected input1{.ids = {280, 164, 227, 227, 88, 282},
                        .type_ids = {0, 0, 0, 0, 0, 0},
                        .tokens = {"\xc4\xa0hello", "\xc3\xa3", "\xc4\xa2", "\xc4\xa2", "t", "here"},
                        .offsets = {{0, 6}, {6, 9}, {6, 9}, {6, 9}, {9, 10}, {10, 14}},
                        .special = {0, 0, 0, 0, 0, 0}};
  const Expected expected{
      .ids = {225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279, 280, 164, 227, 227, 88, 282},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1},
      .tokens = {"\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",", "\xc4\xa0t", "here", "!",
                 "\xc4\xa0\xc4\xa0", "\xc4\xa0hello", "\xc3\xa3", "\xc4\xa2", "\xc4\xa2", "t", "here"},
      .offsets = {{0, 0},
                  {2, 2},
                  {2, 4},
                  {4, 7},
                  {8, 8},
                  {9, 14},
                  {14, 15},
                  {16, 17},
                  {17, 21},
                  {21, 22},
                  {24, 24},
                  {0, 6},
                  {6, 9},
                  {6, 9},
                  {6, 9},
                  {9, 10},
                  {10, 14}},
      .special = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .sequence = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}};
  expect_processed(processor, input0, &input1, true, expected);
}

TEST(PostProcessorTest, BertPair) {
  // tokenizers 0.23.3 on 'Hello, world!', 'the cats'
  const std::string processor = R"json({"type":"BertProcessing","sep":["[SEP]",3],"cls":["[CLS]",2]})json";
  const Expected input0{.ids = {5, 16, 6, 18},
                        .type_ids = {0, 0, 0, 0},
                        .tokens = {"hello", ",", "world", "!"},
                        .offsets = {{0, 5}, {5, 6}, {7, 12}, {12, 13}},
                        .special = {0, 0, 0, 0}};
  const Expected input1{.ids = {7, 8, 9},
                        .type_ids = {0, 0, 0},
                        .tokens = {"the", "cat", "##s"},
                        .offsets = {{0, 3}, {4, 7}, {7, 8}},
                        .special = {0, 0, 0}};
  const Expected expected{
      .ids = {2, 5, 16, 6, 18, 3, 7, 8, 9, 3},
      .type_ids = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
      .tokens = {"[CLS]", "hello", ",", "world", "!", "[SEP]", "the", "cat", "##s", "[SEP]"},
      .offsets = {{0, 0}, {0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 0}, {0, 3}, {4, 7}, {7, 8}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, kNone, 1, 1, 1, kNone}};
  expect_processed(processor, input0, &input1, true, expected);
}

TEST(PostProcessorTest, BertPairWithoutSpecialTokens) {
  // tokenizers 0.23.3 on 'Hello, world!', 'the cats'
  const std::string processor = R"json({"type":"BertProcessing","sep":["[SEP]",3],"cls":["[CLS]",2]})json";
  const Expected input0{.ids = {5, 16, 6, 18},
                        .type_ids = {0, 0, 0, 0},
                        .tokens = {"hello", ",", "world", "!"},
                        .offsets = {{0, 5}, {5, 6}, {7, 12}, {12, 13}},
                        .special = {0, 0, 0, 0}};
  const Expected input1{.ids = {7, 8, 9},
                        .type_ids = {0, 0, 0},
                        .tokens = {"the", "cat", "##s"},
                        .offsets = {{0, 3}, {4, 7}, {7, 8}},
                        .special = {0, 0, 0}};
  const Expected expected{.ids = {5, 16, 6, 18, 7, 8, 9},
                          .type_ids = {0, 0, 0, 0, 1, 1, 1},
                          .tokens = {"hello", ",", "world", "!", "the", "cat", "##s"},
                          .offsets = {{0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 3}, {4, 7}, {7, 8}},
                          .special = {0, 0, 0, 0, 0, 0, 0},
                          .sequence = {0, 0, 0, 0, 1, 1, 1}};
  expect_processed(processor, input0, &input1, false, expected);
}

TEST(PostProcessorTest, BertSingle) {
  // tokenizers 0.23.3 on 'Hello, world!'
  const std::string processor = R"json({"type":"BertProcessing","sep":["[SEP]",3],"cls":["[CLS]",2]})json";
  const Expected input0{.ids = {5, 16, 6, 18},
                        .type_ids = {0, 0, 0, 0},
                        .tokens = {"hello", ",", "world", "!"},
                        .offsets = {{0, 5}, {5, 6}, {7, 12}, {12, 13}},
                        .special = {0, 0, 0, 0}};
  const Expected expected{.ids = {2, 5, 16, 6, 18, 3},
                          .type_ids = {0, 0, 0, 0, 0, 0},
                          .tokens = {"[CLS]", "hello", ",", "world", "!", "[SEP]"},
                          .offsets = {{0, 0}, {0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 0}},
                          .special = {1, 0, 0, 0, 0, 1},
                          .sequence = {kNone, 0, 0, 0, 0, kNone}};
  expect_processed(processor, input0, nullptr, true, expected);
}

TEST(PostProcessorTest, TemplatePair) {
  // tokenizers 0.23.3 on 'Hello, world!', 'the cats'
  const std::string processor =
      R"json({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}}],"pair":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"B","type_id":1}},{"SpecialToken":{"id":"[SEP]","type_id":0}},{"SpecialToken":{"id":"[HW]","type_id":2}},{"Sequence":{"id":"A","type_id":3}},{"SpecialToken":{"id":"[SEP]","type_id":1}}],"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]},"[HW]":{"id":"[HW]","ids":[5,6],"tokens":["hello","world"]},"[SEP]":{"id":"[SEP]","ids":[3],"tokens":["[SEP]"]}}})json";
  const Expected input0{.ids = {5, 16, 6, 18},
                        .type_ids = {0, 0, 0, 0},
                        .tokens = {"hello", ",", "world", "!"},
                        .offsets = {{0, 5}, {5, 6}, {7, 12}, {12, 13}},
                        .special = {0, 0, 0, 0}};
  const Expected input1{.ids = {7, 8, 9},
                        .type_ids = {0, 0, 0},
                        .tokens = {"the", "cat", "##s"},
                        .offsets = {{0, 3}, {4, 7}, {7, 8}},
                        .special = {0, 0, 0}};
  const Expected expected{
      .ids = {2, 7, 8, 9, 3, 5, 6, 5, 16, 6, 18, 3},
      .type_ids = {0, 1, 1, 1, 0, 2, 2, 3, 3, 3, 3, 1},
      .tokens = {"[CLS]", "the", "cat", "##s", "[SEP]", "hello", "world", "hello", ",", "world", "!", "[SEP]"},
      .offsets = {{0, 0}, {0, 3}, {4, 7}, {7, 8}, {0, 0}, {0, 0}, {0, 0}, {0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 0}},
      .special = {1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1},
      .sequence = {kNone, 1, 1, 1, kNone, kNone, kNone, 0, 0, 0, 0, kNone}};
  expect_processed(processor, input0, &input1, true, expected);
}

TEST(PostProcessorTest, TemplatePairWithoutSpecialTokens) {
  // tokenizers 0.23.3 on 'Hello, world!', 'the cats'
  const std::string processor =
      R"json({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}}],"pair":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"B","type_id":1}},{"SpecialToken":{"id":"[SEP]","type_id":0}},{"SpecialToken":{"id":"[HW]","type_id":2}},{"Sequence":{"id":"A","type_id":3}},{"SpecialToken":{"id":"[SEP]","type_id":1}}],"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]},"[HW]":{"id":"[HW]","ids":[5,6],"tokens":["hello","world"]},"[SEP]":{"id":"[SEP]","ids":[3],"tokens":["[SEP]"]}}})json";
  const Expected input0{.ids = {5, 16, 6, 18},
                        .type_ids = {0, 0, 0, 0},
                        .tokens = {"hello", ",", "world", "!"},
                        .offsets = {{0, 5}, {5, 6}, {7, 12}, {12, 13}},
                        .special = {0, 0, 0, 0}};
  const Expected input1{.ids = {7, 8, 9},
                        .type_ids = {0, 0, 0},
                        .tokens = {"the", "cat", "##s"},
                        .offsets = {{0, 3}, {4, 7}, {7, 8}},
                        .special = {0, 0, 0}};
  const Expected expected{.ids = {7, 8, 9, 5, 16, 6, 18},
                          .type_ids = {1, 1, 1, 3, 3, 3, 3},
                          .tokens = {"the", "cat", "##s", "hello", ",", "world", "!"},
                          .offsets = {{0, 3}, {4, 7}, {7, 8}, {0, 5}, {5, 6}, {7, 12}, {12, 13}},
                          .special = {0, 0, 0, 0, 0, 0, 0},
                          .sequence = {1, 1, 1, 0, 0, 0, 0}};
  expect_processed(processor, input0, &input1, false, expected);
}

TEST(PostProcessorTest, TemplateSingle) {
  // tokenizers 0.23.3 on 'the cats'
  const std::string processor =
      R"json({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}}],"pair":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"B","type_id":1}},{"SpecialToken":{"id":"[SEP]","type_id":0}},{"SpecialToken":{"id":"[HW]","type_id":2}},{"Sequence":{"id":"A","type_id":3}},{"SpecialToken":{"id":"[SEP]","type_id":1}}],"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]},"[HW]":{"id":"[HW]","ids":[5,6],"tokens":["hello","world"]},"[SEP]":{"id":"[SEP]","ids":[3],"tokens":["[SEP]"]}}})json";
  const Expected input0{.ids = {7, 8, 9},
                        .type_ids = {0, 0, 0},
                        .tokens = {"the", "cat", "##s"},
                        .offsets = {{0, 3}, {4, 7}, {7, 8}},
                        .special = {0, 0, 0}};
  const Expected expected{.ids = {2, 7, 8, 9, 3},
                          .type_ids = {0, 0, 0, 0, 0},
                          .tokens = {"[CLS]", "the", "cat", "##s", "[SEP]"},
                          .offsets = {{0, 0}, {0, 3}, {4, 7}, {7, 8}, {0, 0}},
                          .special = {1, 0, 0, 0, 1},
                          .sequence = {kNone, 0, 0, 0, kNone}};
  expect_processed(processor, input0, nullptr, true, expected);
}

TEST(PostProcessorTest, SequenceOfByteLevelAndTemplate) {
  // tokenizers 0.23.3 on '  Hello  world, there!  ', ' hello\u3000there'
  const std::string processor =
      R"json({"type":"Sequence","processors":[{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"</s>","type_id":0}}],"pair":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"</s>","type_id":0}},{"Sequence":{"id":"B","type_id":1}},{"SpecialToken":{"id":"</s>","type_id":1}}],"special_tokens":{"</s>":{"id":"</s>","ids":[2],"tokens":["</s>"]},"<s>":{"id":"<s>","ids":[0],"tokens":["<s>"]}}}]})json";
  const Expected input0{
      .ids = {225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",", "\xc4\xa0t", "here", "!",
                 "\xc4\xa0\xc4\xa0"},
      .offsets = {{0, 1}, {1, 2}, {2, 4}, {4, 7}, {7, 8}, {8, 14}, {14, 15}, {15, 17}, {17, 21}, {21, 22}, {22, 24}},
      .special = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
  const Expected input1{.ids = {280, 164, 227, 227, 88, 282},
                        .type_ids = {0, 0, 0, 0, 0, 0},
                        .tokens = {"\xc4\xa0hello", "\xc3\xa3", "\xc4\xa2", "\xc4\xa2", "t", "here"},
                        .offsets = {{0, 6}, {6, 9}, {6, 9}, {6, 9}, {9, 10}, {10, 14}},
                        .special = {0, 0, 0, 0, 0, 0}};
  const Expected expected{
      .ids = {0, 225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279, 2, 280, 164, 227, 227, 88, 282, 2},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1},
      .tokens = {"<s>",
                 "\xc4\xa0",
                 "\xc4\xa0",
                 "He",
                 "llo",
                 "\xc4\xa0",
                 "\xc4\xa0world",
                 ",",
                 "\xc4\xa0t",
                 "here",
                 "!",
                 "\xc4\xa0\xc4\xa0",
                 "</s>",
                 "\xc4\xa0hello",
                 "\xc3\xa3",
                 "\xc4\xa2",
                 "\xc4\xa2",
                 "t",
                 "here",
                 "</s>"},
      .offsets = {{0, 0},   {1, 1},   {2, 2}, {2, 4}, {4, 7}, {8, 8}, {9, 14}, {14, 15}, {16, 17}, {17, 21},
                  {21, 22}, {24, 24}, {0, 0}, {1, 6}, {6, 9}, {6, 9}, {6, 9},  {9, 10},  {10, 14}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, kNone, 1, 1, 1, 1, 1, 1, kNone}};
  expect_processed(processor, input0, &input1, true, expected);
}

TEST(PostProcessorTest, EmptySequenceTemplate) {
  // tokenizers 0.23.3 on ''
  const std::string processor =
      R"json({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}}],"pair":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"B","type_id":1}},{"SpecialToken":{"id":"[SEP]","type_id":0}},{"SpecialToken":{"id":"[HW]","type_id":2}},{"Sequence":{"id":"A","type_id":3}},{"SpecialToken":{"id":"[SEP]","type_id":1}}],"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]},"[HW]":{"id":"[HW]","ids":[5,6],"tokens":["hello","world"]},"[SEP]":{"id":"[SEP]","ids":[3],"tokens":["[SEP]"]}}})json";
  const Expected input0{.ids = {}, .type_ids = {}, .tokens = {}, .offsets = {}, .special = {}};
  const Expected expected{.ids = {2, 3},
                          .type_ids = {0, 0},
                          .tokens = {"[CLS]", "[SEP]"},
                          .offsets = {{0, 0}, {0, 0}},
                          .special = {1, 1},
                          .sequence = {kNone, kNone}};
  expect_processed(processor, input0, nullptr, true, expected);
}

constexpr const char* kBert = R"json({"type":"BertProcessing","sep":["[SEP]",3],"cls":["[CLS]",2]})json";
constexpr const char* kRoberta =
    R"json({"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":true,"add_prefix_space":true})json";
constexpr const char* kTemplate = R"json({"type":"TemplateProcessing",
  "single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],
  "pair":[{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[HW]","type_id":1}},
          {"Sequence":{"id":"B","type_id":1}},{"SpecialToken":{"id":"[SEP]","type_id":1}}],
  "special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]},
                    "[SEP]":{"id":"[SEP]","ids":[3],"tokens":["[SEP]"]},
                    "[HW]":{"id":"[HW]","ids":[5,6],"tokens":["hello","world"]}}})json";

TEST(PostProcessorTest, CountsTheSpecialTokensItAdds) {
  // tokenizers 0.23.3's num_special_tokens_to_add for the same processors.
  const std::vector<std::tuple<std::string, std::size_t, std::size_t>> cases = {
      {kBert, 2, 3},
      {kRoberta, 2, 4},
      {kTemplate, 1, 3},
      {R"json({"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true})json", 0, 0},
      {std::string(R"json({"type":"Sequence","processors":[)json") + kBert + "," + kTemplate + "]}", 3, 6},
  };
  for (const auto& [text, single, pair] : cases) {
    auto processor = make(text);
    ASSERT_TRUE(processor.ok()) << processor.status().message();
    EXPECT_EQ((*processor)->added_tokens(false), single) << text;
    EXPECT_EQ((*processor)->added_tokens(true), pair) << text;
  }
}

TEST(PostProcessorTest, SpecialTokensTakeTheSequenceIdOfTheirSide) {
  const Expected first{.ids = {5}, .tokens = {"hello"}, .offsets = {{0, 5}}};
  const Expected second{.ids = {6}, .tokens = {"world"}, .offsets = {{0, 5}}};
  // [CLS] hello [SEP] world [SEP]
  EXPECT_EQ(processed(kBert, first, &second, true).sequence_ids, (std::vector<std::uint32_t>{0, 0, 0, 1, 1}));
  // <s> hello </s> </s> world </s>
  EXPECT_EQ(processed(kRoberta, first, &second, true).sequence_ids, (std::vector<std::uint32_t>{0, 0, 0, 1, 1, 1}));
  // hello [HW]=hello world, world [SEP]: after $A, the first piece's side; after $B, the second's.
  EXPECT_EQ(processed(kTemplate, first, &second, true).sequence_ids, (std::vector<std::uint32_t>{0, 0, 0, 1, 1}));
  // [CLS] opens the single template: the side of the sequence after it.
  EXPECT_EQ(processed(kTemplate, first, nullptr, true).sequence_ids, (std::vector<std::uint32_t>{0, 0}));
}

void expect_refused(const std::string& text, const std::string& part) {
  auto processor = make(text);
  ASSERT_FALSE(processor.ok()) << text;
  EXPECT_EQ(processor.code(), Code::invalid_argument);
  EXPECT_NE(processor.status().message().find(part), std::string::npos) << processor.status().message();
}

TEST(PostProcessorTest, RefusesUnknownTypes) {
  expect_refused(R"json({"type":"Wordy"})json", "post_processor.type is \"Wordy\"");
  expect_refused(R"json({"type":"Sequence","processors":[{"type":"ByteLevel","add_prefix_space":true,
                 "trim_offsets":true},{"type":"Nope"}]})json",
                 "post_processor.processors[1].type is \"Nope\"");
  expect_refused(R"json({"sep":["[SEP]",3]})json", "post_processor.type is missing");
}

TEST(PostProcessorTest, RefusesSpecialTokensTheVocabularyLacksOrNumbersOtherwise) {
  expect_refused(R"json({"type":"BertProcessing","sep":["[SEP]",3],"cls":["[KLS]",2]})json",
                 "post_processor.cls is \"[KLS]\"; the special token is not in the vocabulary");
  expect_refused(R"json({"type":"BertProcessing","sep":["[SEP]",4],"cls":["[CLS]",2]})json",
                 "post_processor.sep is 4; the vocabulary gives \"[SEP]\" the id 3");
  expect_refused(R"json({"type":"BertProcessing","sep":["[SEP]",-1],"cls":["[CLS]",2]})json",
                 "post_processor.sep[1] is -1");
  expect_refused(R"json({"type":"BertProcessing","sep":"[SEP]","cls":["[CLS]",2]})json",
                 "post_processor.sep is \"[SEP]\"; expected [token, id]");
  expect_refused(R"json({"type":"TemplateProcessing","single":[],"pair":[],
                 "special_tokens":{"x":{"id":"x","ids":[5],"tokens":["world"]}}})json",
                 "post_processor.special_tokens.x is 5; the vocabulary gives \"world\" the id 6");
}

TEST(PostProcessorTest, RefusesMalformedTemplates) {
  const std::string specials = R"json("special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]}})json";
  const std::string a = R"json({"Sequence":{"id":"A","type_id":0}})json";
  const std::string b = R"json({"Sequence":{"id":"B","type_id":1}})json";
  const auto document = [&](const std::string& single, const std::string& pair, const std::string& tokens) {
    return R"json({"type":"TemplateProcessing","single":)json" + single + R"json(,"pair":)json" + pair + "," + tokens +
           "}";
  };
  expect_refused(document("[" + b + "]", "[" + a + "," + b + "]", specials),
                 "post_processor.single[0].Sequence.id is \"B\"; a single sequence has no B");
  expect_refused(document("[" + a + R"json(,{"SpecialToken":{"id":"[SEP]","type_id":0}}])json", "[]", specials),
                 "post_processor.single[1].SpecialToken.id is \"[SEP]\"; not one of the template's special_tokens");
  expect_refused(document(R"json([{"Sequence":{"id":"C","type_id":0}}])json", "[]", specials),
                 "post_processor.single[0].Sequence.id is \"C\"");
  expect_refused(document(R"json([{"Sequence":{"id":"A","type_id":-2}}])json", "[]", specials),
                 "post_processor.single[0].Sequence.type_id is -2");
  expect_refused(document(R"json(["$A"])json", "[]", specials), "post_processor.single[0] is \"$A\"");
  expect_refused(document("[]", "[]", R"json("special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2,3],
                 "tokens":["[CLS]"]}})json"),
                 "post_processor.special_tokens.[CLS].tokens is [\"[CLS]\"]; expected as many tokens as ids");
}

TEST(PostProcessorTest, RefusesMissingOptionsAndDeepNesting) {
  expect_refused(R"json({"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":true})json",
                 "post_processor.add_prefix_space is missing");
  expect_refused(R"json({"type":"ByteLevel","add_prefix_space":"yes","trim_offsets":true})json",
                 "post_processor.add_prefix_space is \"yes\"");
  std::string nested = R"json({"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true})json";
  for (int i = 0; i < 40; ++i) nested = R"json({"type":"Sequence","processors":[)json" + nested + "]}";
  expect_refused(nested, "Sequences nest too deeply");
}

}  // namespace
}  // namespace accel::text

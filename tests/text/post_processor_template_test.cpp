// BertProcessing, TemplateProcessing and Sequence against HuggingFace tokenizers 0.23.3, as post_processor_test.cpp
// checks RobertaProcessing and ByteLevel (see its comment for where the values come from); the special tokens each
// adds and their sequence ids; the refusals, each naming what was wrong.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "text/post_processor_testing.hpp"

namespace accel::text {
namespace {

using namespace post_processor_testing;

// The WordPiece tokens tokenizers' pipeline (no post-processor) gave for 'Hello, world!' and for 'the cats'.
const Expected kHelloCommaWorld{.ids = {5, 16, 6, 18},
                                .type_ids = {0, 0, 0, 0},
                                .tokens = {"hello", ",", "world", "!"},
                                .offsets = {{0, 5}, {5, 6}, {7, 12}, {12, 13}},
                                .special = {0, 0, 0, 0}};

const Expected kTheCats{.ids = {7, 8, 9},
                        .type_ids = {0, 0, 0},
                        .tokens = {"the", "cat", "##s"},
                        .offsets = {{0, 3}, {4, 7}, {7, 8}},
                        .special = {0, 0, 0}};

TEST(PostProcessorTest, BertPair) {
  // tokenizers 0.23.3 on 'Hello, world!', 'the cats'
  const std::string processor = R"json({"type":"BertProcessing","sep":["[SEP]",3],"cls":["[CLS]",2]})json";
  const Expected& input0 = kHelloCommaWorld;
  const Expected& input1 = kTheCats;
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
  const Expected& input0 = kHelloCommaWorld;
  const Expected& input1 = kTheCats;
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
  const Expected& input0 = kHelloCommaWorld;
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
  const Expected& input0 = kHelloCommaWorld;
  const Expected& input1 = kTheCats;
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
  const Expected& input0 = kHelloCommaWorld;
  const Expected& input1 = kTheCats;
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
  const Expected& input0 = kTheCats;
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
  const Expected& input0 = kSpacedHelloWorld;
  const Expected& input1 = kHelloIdeographicSpaceThere;
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

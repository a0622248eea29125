// The post-processors against HuggingFace tokenizers 0.23.3: each case feeds the processor the tokens tokenizers'
// own pipeline gave (with no post-processor) and expects what tokenizers gave with it; the values were printed by a
// Python script with tokenizers 0.23.3 (character offsets converted to bytes). Sequence ids of special tokens are
// ours (tokenizers leaves them unset) and are checked on their own.
// This file: RobertaProcessing and ByteLevel; post_processor_template_test.cpp: BertProcessing, TemplateProcessing,
// Sequence and the refusals.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "text/post_processor_testing.hpp"

namespace accel::text {
namespace {

using namespace post_processor_testing;

TEST(PostProcessorTest, RobertaTrimsByteLevelSpaces) {
  // tokenizers 0.23.3 on '  Hello  world, there!  '
  const std::string processor =
      R"json({"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":true,"add_prefix_space":false})json";
  const Expected& input0 = kSpacedHelloWorld;
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
  const Expected& input0 = kSpacedHelloWorld;
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
  const Expected& input0 = kSpacedHelloWorld;
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
  const Expected& input0 = kSpacedHelloWorld;
  const Expected& input1 = kHelloIdeographicSpaceThere;
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
  const Expected& input0 = kSpacedHelloWorld;
  const Expected& input1 = kHelloIdeographicSpaceThere;
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
  const Expected& input0 = kSpacedHelloWorld;
  const Expected& input1 = kHelloIdeographicSpaceThere;
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

}  // namespace
}  // namespace accel::text

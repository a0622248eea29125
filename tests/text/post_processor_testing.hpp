// What the post-processor tests share (post_processor_test.cpp, post_processor_template_test.cpp): the encodings
// HuggingFace tokenizers 0.23.3 gave (kNone where it leaves a sequence id unset), the vocabulary of the cases' special
// tokens, and a processor run over sequences as the tokenizer hands them to it, compared with what tokenizers gave.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "accel/text/tokenizer.hpp"
#include "text/expected_encoding.hpp"
#include "text/tokenizer/components.hpp"

namespace accel::text {

namespace post_processor_testing {

using expected_encoding::Expected;
using expected_encoding::kNone;

// The byte-level BPE tokens tokenizers' pipeline (no post-processor) gave for '  Hello  world, there!  ' and for
// ' hello\u3000there'.
inline const Expected kSpacedHelloWorld{
    .ids = {225, 225, 287, 265, 225, 271, 16, 264, 282, 5, 279},
    .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    .tokens = {"\xc4\xa0", "\xc4\xa0", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",", "\xc4\xa0t", "here", "!",
               "\xc4\xa0\xc4\xa0"},
    .offsets = {{0, 1}, {1, 2}, {2, 4}, {4, 7}, {7, 8}, {8, 14}, {14, 15}, {15, 17}, {17, 21}, {21, 22}, {22, 24}},
    .special = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};

inline const Expected kHelloIdeographicSpaceThere{
    .ids = {280, 164, 227, 227, 88, 282},
    .type_ids = {0, 0, 0, 0, 0, 0},
    .tokens = {"\xc4\xa0hello", "\xc3\xa3", "\xc4\xa2", "\xc4\xa2", "t", "here"},
    .offsets = {{0, 6}, {6, 9}, {6, 9}, {6, 9}, {9, 10}, {10, 14}},
    .special = {0, 0, 0, 0, 0, 0}};

// The special tokens the cases' processors name, as the vocabulary knows them.
inline const Vocabulary& vocabulary() {
  static const Vocabulary kVocabulary{
      .model = nullptr, .added = {{"<s>", 0}, {"</s>", 2}, {"[CLS]", 2}, {"[SEP]", 3}, {"hello", 5}, {"world", 6}}};
  return kVocabulary;
}

inline Result<std::unique_ptr<PostProcessor>> make(const std::string& text) {
  return make_post_processor(nlohmann::json::parse(text), "post_processor", vocabulary());
}

// A sequence as the tokenizer hands it to the post-processor.
inline Encoding as_sequence(const Expected& tokens, std::uint32_t sequence) {
  Encoding encoding;
  encoding.ids = tokens.ids;
  encoding.tokens = tokens.tokens;
  encoding.offsets = tokens.offsets;
  encoding.type_ids.assign(tokens.ids.size(), static_cast<std::int32_t>(sequence));
  encoding.special_tokens_mask.assign(tokens.ids.size(), 0);
  encoding.sequence_ids.assign(tokens.ids.size(), sequence);
  return encoding;
}

inline Encoding processed(const std::string& processor_json, const Expected& first, const Expected* second,
                          bool add_special_tokens) {
  auto processor = make(processor_json);
  EXPECT_TRUE(processor.ok()) << processor.status().message();
  if (!processor.ok()) return {};
  Encoding encoding = as_sequence(first, 0);
  const Encoding pair = second != nullptr ? as_sequence(*second, 1) : Encoding{};
  (*processor)->process(encoding, second != nullptr ? &pair : nullptr, add_special_tokens);
  return encoding;
}

inline void expect_processed(const std::string& processor_json, const Expected& first, const Expected* second,
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

}  // namespace post_processor_testing
}  // namespace accel::text

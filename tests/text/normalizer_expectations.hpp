// What the normalizer tests compare: a text, the text tokenizers 0.23.3 normalizes it to, and the original byte
// range each normalized code point stands for, as tokenizers' Python PreTokenizedString printed them
// (get_splits with original byte offsets after splitting the normalized text into single code points).
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <string_view>
#include <utility>
#include <vector>

#include "text/tokenizer/components.hpp"
#include "text/tokenizer/utf8.hpp"

namespace accel::text {

inline void PrintTo(const Range& range, std::ostream* out) { *out << "{" << range.begin << ", " << range.end << "}"; }

struct NormalizerCase {
  std::string_view input;
  std::string_view expected;
  std::vector<Range> alignments;  // one per code point of `expected`
};

inline std::unique_ptr<Normalizer> normalizer_from(std::string_view json_text) {
  auto normalizer = make_normalizer(nlohmann::json::parse(json_text), "normalizer");
  if (!normalizer.ok()) {
    ADD_FAILURE() << normalizer.status().message();
    return nullptr;
  }
  return std::move(normalizer).value();
}

// Each normalized code point's alignment, checking that all its bytes share it.
inline std::vector<Range> code_point_alignments(const NormalizedString& text) {
  std::vector<Range> alignments;
  const std::string& bytes = text.normalized();
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t length = utf8::sequence_length(static_cast<unsigned char>(bytes[i]));
    for (std::size_t k = 1; k < length; ++k) EXPECT_EQ(text.alignment(i + k), text.alignment(i));
    alignments.push_back(text.alignment(i));
    i += length;
  }
  return alignments;
}

inline void expect_cases(std::string_view normalizer_json, const std::vector<NormalizerCase>& cases) {
  const auto normalizer = normalizer_from(normalizer_json);
  ASSERT_NE(normalizer, nullptr);
  for (const NormalizerCase& c : cases) {
    SCOPED_TRACE(testing::Message() << "input \"" << c.input << "\"");
    NormalizedString text(c.input);
    normalizer->normalize(text);
    EXPECT_EQ(text.normalized(), c.expected);
    EXPECT_EQ(code_point_alignments(text), c.alignments);
  }
}

}  // namespace accel::text

// An encoding as HuggingFace tokenizers gave it, for the tests that compare ours with it (tokenizer_test.cpp, the
// post-processor tests): ids, type ids, tokens, byte offsets, the special-tokens mask and the sequence ids, kNone
// where tokenizers leaves one unset. Ranges print as {begin, end} in a failure.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "accel/text/tokenizer.hpp"

namespace accel::text {

inline void PrintTo(const Range& range, std::ostream* out) { *out << "{" << range.begin << ", " << range.end << "}"; }

namespace expected_encoding {

inline constexpr std::uint32_t kNone = 255;  // tokenizers gives no sequence id

struct Expected {
  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> type_ids;
  std::vector<std::string> tokens;
  std::vector<Range> offsets;
  std::vector<std::uint8_t> special;
  std::vector<std::uint32_t> sequence;
};

}  // namespace expected_encoding
}  // namespace accel::text

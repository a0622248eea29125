// What every text::Encoding must satisfy, whatever tokenizer.json and text produced it; the tokenizer fuzzers
// abort (a finding) on the first violation, printing which.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "accel/text/tokenizer.hpp"

namespace accel::fuzzing {

[[noreturn]] inline void violated(const char* invariant) {
  std::fprintf(stderr, "encoding invariant violated: %s\n", invariant);
  std::abort();
}

// Strictly valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF), written apart from the
// tokenizer's own check so that the two can disagree.
inline bool valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    char32_t c = 0;
    if (lead < 0x80) {
      length = 1, c = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2, c = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3, c = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4, c = lead & 0x07;
    } else {
      return false;
    }
    if (text.size() - i < length) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      c = (c << 6) | (next & 0x3F);
    }
    constexpr char32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < kShortest[length] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

// `second` is null for a single text. `max_length` as in EncodeOptions (0: no limit). When `exact_tokens`, each
// token is the tokenizer's entry for its id (a fuzzed vocabulary may give one id two entries, so not always) or,
// for an unknown piece, its text.
inline void check_encoding(const text::Tokenizer& tokenizer, const text::Encoding& encoding, std::string_view first,
                           const std::string_view* second, std::size_t max_length, bool exact_tokens) {
  const std::size_t size = encoding.ids.size();
  if (encoding.type_ids.size() != size || encoding.tokens.size() != size || encoding.offsets.size() != size ||
      encoding.special_tokens_mask.size() != size || encoding.sequence_ids.size() != size) {
    violated("the vectors of an encoding differ in length");
  }
  if (max_length != 0 && size > max_length) violated("more ids than max_length");
  const std::size_t vocabulary = tokenizer.vocabulary_size();
  for (std::size_t i = 0; i < size; ++i) {
    const std::int32_t id = encoding.ids[i];
    if (id < 0 || static_cast<std::size_t>(id) >= vocabulary) violated("an id outside the vocabulary");
    const auto entry = tokenizer.id_to_token(id);
    if (!entry) violated("an id the tokenizer has no token for");
    // Unigram keeps an unknown piece's own text as its token, as tokenizers does; any other token is its entry.
    if (exact_tokens && *entry != encoding.tokens[i] && tokenizer.token_to_id(encoding.tokens[i])) {
      violated("a token that is another id's entry");
    }
    const std::uint32_t sequence = encoding.sequence_ids[i];
    if (sequence > (second != nullptr ? 1U : 0U)) violated("a sequence id past the texts encoded");
    const std::size_t text_size = sequence == 0 ? first.size() : second->size();
    const text::Range offsets = encoding.offsets[i];
    if (offsets.begin > offsets.end) violated("offsets that begin after they end");
    if (offsets.end > text_size) violated("offsets past the end of their text");
    if (encoding.special_tokens_mask[i] > 1) violated("a special tokens mask other than 0 or 1");
  }
}

}  // namespace accel::fuzzing

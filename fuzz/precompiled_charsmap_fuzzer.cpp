// text::PrecompiledCharsmap::from_bytes: a SentencePiece charsmap as a tokenizer.json carries it (base64-decoded).
// A charsmap that loads also normalizes a fixed text with accents, compatibility characters, Hangul, an emoji ZWJ
// sequence, Thai, Arabic, a NUL and other controls, so that every lookup its trie allows is exercised.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "text/tokenizer/normalized_string.hpp"
#include "text/tokenizer/precompiled_charsmap.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel::text;
  using namespace std::string_view_literals;
  auto charsmap = PrecompiledCharsmap::from_bytes(std::string_view(reinterpret_cast<const char*>(data), size),
                                                  "precompiled_charsmap");
  if (!charsmap.ok()) return 0;
  constexpr std::string_view kText =
      "He\xCC\x81llo \xEF\xAC\x81 \xE2\x91\xA0 \xEF\xBD\xB6\xEF\xBE\x9E \xED\x95\x9C\xEA\xB5\xAD \xF0\x9F\x91\xA9"
      "\xE2\x80\x8D\xF0\x9F\x91\xA7 \xE0\xB8\xA0\xE0\xB8\xB2\xE0\xB8\xA9\xE0\xB8\xB2 \xD8\xA7\xD9\x84\xD8\xB9 "
      "\x00\x07\t\xE2\x80\x8B  x"sv;
  NormalizedString text(kText);
  charsmap->normalize(text);
  return 0;
}

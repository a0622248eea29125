// accel::text::PrecompiledCharsmap — the normalization rules a SentencePiece model carries as its
// "precompiled_charsmap", as tokenizers' Precompiled normalizer runs them (crate spm_precompiled).
//
// The bytes are a little-endian u32 (the trie's size in bytes), the trie — a darts-clone double array of u32
// units over the UTF-8 bytes of the strings it maps — and then the replacement strings, each ended by a NUL,
// which the trie's values index. They come from an untrusted file: loading checks every trie unit a lookup can
// reach and every replacement a value can name, so that a malformed charsmap is refused then and a lookup never
// reads past either array.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"
#include "text/tokenizer/normalized_string.hpp"

namespace accel::text {

class PrecompiledCharsmap {
 public:
  // The tokenizer.json field's text (standard base64 with padding, as tokenizers requires). invalid_argument
  // naming `path` when it is not base64 or not a well-formed charsmap.
  static Result<PrecompiledCharsmap> from_base64(std::string_view base64, std::string_view path);
  // The decoded bytes; errors name `path` as above.
  static Result<PrecompiledCharsmap> from_bytes(std::string_view bytes, std::string_view path);

  // The replacement the trie gives the shortest prefix of `key` it holds (a lookup stops at a NUL byte), or
  // nullopt when it holds none. spm_precompiled takes the shortest, not the longest, and so do we.
  [[nodiscard]] std::optional<std::string_view> replacement(std::string_view key) const;

  // Rewrites `text` grapheme by grapheme: a grapheme shorter than 6 bytes that has a replacement is replaced
  // whole, any other grapheme code point by code point; alignments change as tokenizers changes them.
  void normalize(NormalizedString& text) const;

 private:
  PrecompiledCharsmap() = default;
  // Why `bytes` are not a charsmap we can run, or nullopt when they are (then `*this` holds them).
  std::optional<std::string> load(std::string_view bytes);
  [[nodiscard]] std::optional<std::string> check_reachable_units() const;

  std::vector<std::uint32_t> trie_;
  std::string replacements_;  // UTF-8, NUL-separated
};

}  // namespace accel::text

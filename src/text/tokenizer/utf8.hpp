// Small UTF-8 helpers for text the tokenizer has already validated: every string these functions see is valid
// UTF-8 and every offset lies on a code point boundary, so they decode without checking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace accel::text::utf8 {

// The length of the code point whose first byte is `lead`.
[[nodiscard]] constexpr std::size_t sequence_length(unsigned char lead) noexcept {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// The code point starting at byte `i` of `text`; `i` advances past it.
[[nodiscard]] inline char32_t decode(std::string_view text, std::size_t& i) noexcept {
  const auto lead = static_cast<unsigned char>(text[i]);
  const std::size_t length = sequence_length(lead);
  char32_t c = length == 1 ? lead : length == 2 ? (lead & 0x1Fu) : length == 3 ? (lead & 0x0Fu) : (lead & 0x07u);
  for (std::size_t k = 1; k < length && i + k < text.size(); ++k) {
    c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3Fu);
  }
  i += length;
  return c;
}

// Whether every byte of `text` is ASCII: such text is its own lowercase's length and its own Unicode normal form.
[[nodiscard]] inline bool is_ascii(std::string_view text) noexcept {
  for (const char byte : text)
    if (static_cast<unsigned char>(byte) >= 0x80) return false;
  return true;
}

[[nodiscard]] constexpr std::size_t encoded_length(char32_t c) noexcept {
  return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
}

// Writes `c`'s encoding at `out` (room for encoded_length(c) bytes) and returns its length.
inline std::size_t write(char32_t c, char* out) noexcept {
  if (c < 0x80) {
    out[0] = static_cast<char>(c);
    return 1;
  }
  if (c < 0x800) {
    out[0] = static_cast<char>(0xC0 | (c >> 6));
    out[1] = static_cast<char>(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (c >> 12));
    out[1] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (c >> 18));
  out[1] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (c & 0x3F));
  return 4;
}

inline void append(char32_t c, std::string& out) {
  char bytes[4];
  out.append(bytes, write(c, bytes));
}

// The Unicode White_Space property (what Rust's char::is_whitespace and Oniguruma's \s test): the separators
// Zs, Zl, Zp and the controls U+0009..U+000D and U+0085.
[[nodiscard]] constexpr bool is_white_space(char32_t c) noexcept {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

}  // namespace accel::text::utf8

// GPT-2's byte-level alphabet: each of the 256 byte values stands for one printable code point (bytes that are
// printable Latin-1 stand for themselves, the others for U+0100 onwards in byte order), so that any UTF-8 text
// becomes a string a BPE vocabulary can hold. Used by the ByteLevel pre-tokenizer, the ByteLevel post-processor
// (trim_offsets) and BPE's byte fallback, with tokenizers' table and alignment rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "text/tokenizer/normalized_string.hpp"

namespace accel::text {

// The code point that stands for `byte` ('Ġ' U+0120 for the space, 'Ċ' U+010A for '\n').
[[nodiscard]] char32_t byte_to_char(std::uint8_t byte) noexcept;
// The byte `c` stands for, or nothing when `c` is not in the alphabet.
[[nodiscard]] std::optional<std::uint8_t> char_to_byte(char32_t c) noexcept;

// `bytes` written in the alphabet (UTF-8): what the ByteLevel pre-tokenizer makes of that text.
[[nodiscard]] std::string to_byte_level(std::string_view bytes);
// The bytes a string in the alphabet stands for; nothing when it holds a code point outside the alphabet.
[[nodiscard]] std::optional<std::string> from_byte_level(std::string_view utf8);

// Rewrites every byte of the normalized text as its code point in the alphabet; the code points written for one
// old code point all take its alignment (tokenizers' ByteLevel pre-tokenizer).
void to_byte_level(NormalizedString& text);

}  // namespace accel::text

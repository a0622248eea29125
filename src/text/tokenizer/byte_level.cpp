#include "text/tokenizer/byte_level.hpp"

#include <array>
#include <vector>

#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

// openai/gpt-2 encoder.py bytes_to_unicode(): the printable bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF keep their
// value; the rest, in increasing order, take 0x100, 0x101, ...
constexpr std::array<char32_t, 256> make_byte_table() {
  std::array<char32_t, 256> table{};
  char32_t next_free = 0x100;
  for (unsigned byte = 0; byte < 256; ++byte) {
    const bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
    table[byte] = printable ? static_cast<char32_t>(byte) : next_free++;
  }
  return table;
}

constexpr std::array<char32_t, 256> kByteToChar = make_byte_table();

// The alphabet lies below U+0144, so the reverse table is a plain array over that range.
constexpr char32_t kAlphabetEnd = 0x144;
constexpr std::array<std::int16_t, kAlphabetEnd> make_char_table() {
  std::array<std::int16_t, kAlphabetEnd> table{};
  for (auto& entry : table) entry = -1;
  for (unsigned byte = 0; byte < 256; ++byte) table[kByteToChar[byte]] = static_cast<std::int16_t>(byte);
  return table;
}

constexpr std::array<std::int16_t, kAlphabetEnd> kCharToByte = make_char_table();

}  // namespace

char32_t byte_to_char(std::uint8_t byte) noexcept { return kByteToChar[byte]; }

std::optional<std::uint8_t> char_to_byte(char32_t c) noexcept {
  if (c >= kAlphabetEnd || kCharToByte[c] < 0) return std::nullopt;
  return static_cast<std::uint8_t>(kCharToByte[c]);
}

std::string to_byte_level(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char byte : bytes) utf8::append(byte_to_char(static_cast<std::uint8_t>(byte)), out);
  return out;
}

std::optional<std::string> from_byte_level(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size());
  std::size_t i = 0;
  while (i < utf8.size()) {
    const std::optional<std::uint8_t> byte = char_to_byte(utf8::decode(utf8, i));
    if (!byte) return std::nullopt;
    out.push_back(static_cast<char>(*byte));
  }
  return out;
}

void to_byte_level(NormalizedString& text) {
  const std::string& normalized = text.normalized();
  std::vector<CodePointChange> changes;
  changes.reserve(normalized.size());
  std::size_t i = 0;
  while (i < normalized.size()) {
    const std::size_t length = utf8::sequence_length(static_cast<unsigned char>(normalized[i]));
    for (std::size_t k = 0; k < length; ++k) {
      changes.push_back({byte_to_char(static_cast<std::uint8_t>(normalized[i + k])), k == 0 ? 0 : 1});
    }
    i += length;
  }
  text.transform(changes, 0);
}

}  // namespace accel::text

// accel::embed::BertPreTokenizer — cuts normalized text into words as `tokenizers`' pre_tokenizers::
// BertPreTokenizer does: whitespace separates words and is dropped, and each punctuation code point is a
// word of its own.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace accel::embed {

class BertPreTokenizer {
 public:
  enum class Kind : std::uint8_t { letter, whitespace, punctuation };

  // Whitespace is the Unicode White_Space property (Rust's char::is_whitespace). Punctuation is every
  // ASCII symbol (33-47, 58-64, 91-96, 123-126: `tokenizers` adds char::is_ascii_punctuation, so '$', '+',
  // '<', '=', '>', '^', '`', '|' and '~' count although Unicode files them as symbols) and the P* categories.
  [[nodiscard]] static Kind classify(char32_t c) { return c < 0x80 ? kAscii[c] : classify_non_ascii(c); }

  // Calls on_word(std::string_view utf8) for each word of `text`, in order, until it returns false. The
  // view points into `word`, the caller's buffer (reused from one text to the next). Returns whether every
  // call returned true.
  template <class OnWord>
  static bool split(std::span<const char32_t> text, std::string& word, OnWord&& on_word) {
    word.clear();
    for (const char32_t c : text) {
      const Kind kind = classify(c);
      if (kind == Kind::letter) {
        append_utf8(c, word);
        continue;
      }
      if (!word.empty() && !on_word(std::string_view(word))) return false;
      word.clear();
      if (kind == Kind::punctuation) {
        append_utf8(c, word);
        if (!on_word(std::string_view(word))) return false;
        word.clear();
      }
    }
    return word.empty() || on_word(std::string_view(word));
  }

 private:
  static constexpr std::array<Kind, 0x80> kAscii = [] {
    std::array<Kind, 0x80> kinds{};
    for (char32_t c = 0; c < 0x80; ++c) {
      const bool space = c == ' ' || (c >= '\t' && c <= '\r');
      const bool symbol =
          (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
      kinds[c] = space ? Kind::whitespace : symbol ? Kind::punctuation : Kind::letter;
    }
    return kinds;
  }();

  static Kind classify_non_ascii(char32_t c);
  static void append_utf8(char32_t c, std::string& out) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      append_multibyte_utf8(c, out);
    }
  }
  static void append_multibyte_utf8(char32_t c, std::string& out);
};

}  // namespace accel::embed

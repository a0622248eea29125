#include "text/tokenizer/precompiled_charsmap.hpp"

#include <utf8proc.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "text/tokenizer/json_fields.hpp"
#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

// -- base64 --------------------------------------------------------------------------------------------------------

int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// The standard alphabet with the padding and zero trailing bits the base64 crate's STANDARD engine requires.
std::optional<std::string> decode_base64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string bytes;
  bytes.reserve(text.size() / 4 * 3);
  for (std::size_t group = 0; group < text.size(); group += 4) {
    std::uint32_t bits = 0;
    std::size_t padding = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = text[group + k];
      int value = 0;
      if (c == '=') {
        if (k < 2 || group + 4 != text.size()) return std::nullopt;
        ++padding;
      } else if (padding > 0 || (value = sextet(c)) < 0) {
        return std::nullopt;
      }
      bits = (bits << 6) | static_cast<std::uint32_t>(value);
    }
    const std::uint32_t leftover_mask = padding == 0 ? 0 : padding == 1 ? 0xFF : 0xFFFF;
    if ((bits & leftover_mask) != 0) return std::nullopt;
    bytes.push_back(static_cast<char>(bits >> 16));
    if (padding < 2) bytes.push_back(static_cast<char>((bits >> 8) & 0xFF));
    if (padding < 1) bytes.push_back(static_cast<char>(bits & 0xFF));
  }
  return bytes;
}

// -- the double array (darts-clone's unit layout) -----------------------------------------------------------------

bool has_leaf(std::uint32_t unit) { return ((unit >> 8) & 1) != 0; }
std::uint32_t leaf_value(std::uint32_t unit) { return unit & 0x7FFFFFFFu; }
// A leaf unit has the top bit set, so its label never equals a byte.
std::uint32_t label(std::uint32_t unit) { return unit & (0x80000000u | 0xFFu); }
std::size_t child_offset(std::uint32_t unit) {
  return static_cast<std::size_t>(unit >> 10) << ((unit & (1u << 9)) >> 6);
}

std::uint32_t read_le32(std::string_view bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t k = 0; k < 4; ++k)
    value |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + k])) << (8 * k);
  return value;
}

std::optional<std::size_t> first_invalid_utf8(std::string_view bytes) {
  const auto* data = reinterpret_cast<const utf8proc_uint8_t*>(bytes.data());
  std::size_t i = 0;
  while (i < bytes.size()) {
    utf8proc_int32_t c = 0;
    const utf8proc_ssize_t length = utf8proc_iterate(data + i, static_cast<utf8proc_ssize_t>(bytes.size() - i), &c);
    if (length <= 0) return i;
    i += static_cast<std::size_t>(length);
  }
  return std::nullopt;
}

// -- the normalization ------------------------------------------------------------------------------------------

// The end of the extended grapheme cluster that starts at `begin`.
std::size_t grapheme_end(std::string_view text, std::size_t begin) {
  utf8proc_int32_t state = 0;
  std::size_t i = begin;
  char32_t previous = utf8::decode(text, i);
  while (i < text.size()) {
    std::size_t next = i;
    const char32_t c = utf8::decode(text, next);
    if (utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(previous), static_cast<utf8proc_int32_t>(c),
                                         &state)) {
      break;
    }
    previous = c;
    i = next;
  }
  return i;
}

std::size_t code_point_count(std::string_view utf8_text) {
  std::size_t count = 0;
  for (const char byte : utf8_text) count += (static_cast<unsigned char>(byte) & 0xC0) != 0x80 ? 1 : 0;
  return count;
}

// `replaced` old code points become `replacement`, with the changes tokenizers' Precompiled gives them: the new
// code points replace old ones in turn; extra new ones at the end are inserted; when there are fewer, the
// difference is taken from the change of the last code point already in the list (whatever it stands for, and
// nothing when the list is empty).
void append_replacement(std::vector<CodePointChange>& changes, std::size_t replaced, std::string_view replacement) {
  const std::size_t before = changes.size();
  for (std::size_t i = 0; i < replacement.size();) changes.push_back({utf8::decode(replacement, i), 0});
  const auto difference = static_cast<long long>(changes.size() - before) - static_cast<long long>(replaced);
  if (difference > 0) {
    for (std::size_t k = changes.size() - static_cast<std::size_t>(difference); k < changes.size(); ++k) {
      changes[k].change = 1;
    }
  } else if (difference < 0 && !changes.empty()) {
    changes.back().change += static_cast<int>(difference);
  }
}

}  // namespace

Result<PrecompiledCharsmap> PrecompiledCharsmap::from_base64(std::string_view base64, std::string_view path) {
  const auto refuse = [&](std::string_view why) { return json_fields::refused(path, nlohmann::json(base64), why); };
  const std::optional<std::string> bytes = decode_base64(base64);
  if (!bytes) return refuse("expected standard base64 with padding");
  PrecompiledCharsmap charsmap;
  if (auto problem = charsmap.load(*bytes)) return refuse("not a precompiled charsmap: " + *problem);
  return charsmap;
}

Result<PrecompiledCharsmap> PrecompiledCharsmap::from_bytes(std::string_view bytes, std::string_view path) {
  PrecompiledCharsmap charsmap;
  if (auto problem = charsmap.load(bytes)) {
    return invalid_argument("tokenizer.json: " + std::string(path) + " is not a precompiled charsmap: " + *problem);
  }
  return charsmap;
}

std::optional<std::string> PrecompiledCharsmap::load(std::string_view bytes) {
  if (bytes.size() < 4) return "its " + std::to_string(bytes.size()) + " bytes are shorter than the 4-byte header";
  // As in spm_precompiled, a size that is not a multiple of 4 leaves its last bytes to the strings.
  const std::uint32_t trie_bytes = read_le32(bytes, 0);
  const std::size_t units = trie_bytes / 4;
  if (units > (bytes.size() - 4) / 4) {
    return "the header gives a " + std::to_string(trie_bytes) + "-byte trie, but only " +
           std::to_string(bytes.size() - 4) + " bytes follow";
  }
  if (units == 0) return "the trie is empty";
  trie_.resize(units);
  for (std::size_t k = 0; k < units; ++k) trie_[k] = read_le32(bytes, 4 + 4 * k);
  replacements_.assign(bytes.substr(4 + 4 * units));
  if (const auto at = first_invalid_utf8(replacements_)) {
    return "its replacement strings are not UTF-8 (byte " + std::to_string(*at) + " of them)";
  }
  return check_reachable_units();
}

// Walks every node a lookup can reach (each once), with every byte a key can hold, so that replacement() never
// meets an index past the trie or a value that does not start a replacement string.
std::optional<std::string> PrecompiledCharsmap::check_reachable_units() const {
  const std::size_t size = trie_.size();
  const auto past_end = [&](std::size_t index) {
    return "trie index " + std::to_string(index) + " is out of range (the trie has " + std::to_string(size) + " units)";
  };
  const std::size_t root = child_offset(trie_[0]);
  if (root >= size) return past_end(root);
  std::vector<bool> visited(size, false);
  std::vector<std::size_t> pending{root};
  visited[root] = true;
  while (!pending.empty()) {
    const std::size_t node = pending.back();
    pending.pop_back();
    for (std::size_t byte = 1; byte <= 0xFF; ++byte) {
      const std::size_t position = node ^ byte;
      if (position >= size) return past_end(position);
      const std::uint32_t unit = trie_[position];
      if (label(unit) != byte) continue;
      const std::size_t next = position ^ child_offset(unit);
      if (next >= size) return past_end(next);
      if (has_leaf(unit)) {
        const std::uint32_t value = leaf_value(trie_[next]);
        const bool starts_string =
            value == replacements_.size() ||
            (value < replacements_.size() && (static_cast<unsigned char>(replacements_[value]) & 0xC0) != 0x80);
        if (!starts_string) {
          return "trie value " + std::to_string(value) + " does not start a replacement string (they hold " +
                 std::to_string(replacements_.size()) + " bytes)";
        }
      }
      if (!visited[next]) {
        visited[next] = true;
        pending.push_back(next);
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string_view> PrecompiledCharsmap::replacement(std::string_view key) const {
  std::size_t node = child_offset(trie_[0]);
  for (const char byte : key) {
    const auto c = static_cast<unsigned char>(byte);
    if (c == 0) break;
    node ^= c;
    if (node >= trie_.size() || label(trie_[node]) != c) return std::nullopt;
    const std::uint32_t unit = trie_[node];
    node ^= child_offset(unit);
    if (node >= trie_.size()) return std::nullopt;
    if (has_leaf(unit)) {
      const std::size_t begin = leaf_value(trie_[node]);
      if (begin > replacements_.size()) return std::nullopt;
      const std::size_t end = std::min(replacements_.find('\0', begin), replacements_.size());
      return std::string_view(replacements_).substr(begin, end - begin);
    }
  }
  return std::nullopt;
}

void PrecompiledCharsmap::normalize(NormalizedString& text) const {
  const std::string_view normalized = text.normalized();
  std::vector<CodePointChange> changes;
  changes.reserve(normalized.size());
  bool modified = false;
  // spm_precompiled's limit: graphemes of 6 bytes or more are looked up code point by code point.
  constexpr std::size_t kLongestWholeGrapheme = 5;
  for (std::size_t begin = 0; begin < normalized.size();) {
    const std::size_t end = grapheme_end(normalized, begin);
    const std::string_view grapheme = normalized.substr(begin, end - begin);
    begin = end;
    if (grapheme.size() <= kLongestWholeGrapheme) {
      if (const auto whole = replacement(grapheme)) {
        append_replacement(changes, code_point_count(grapheme), *whole);
        modified = true;
        continue;
      }
    }
    for (std::size_t i = 0; i < grapheme.size();) {
      const std::size_t code_point_begin = i;
      const char32_t c = utf8::decode(grapheme, i);
      const auto part = replacement(grapheme.substr(code_point_begin, i - code_point_begin));
      if (part) {
        append_replacement(changes, 1, *part);
        modified = true;
      } else {
        changes.push_back({c, 0});
      }
    }
  }
  if (modified) text.transform(changes, 0);
}

}  // namespace accel::text

// The decoders of a tokenizer.json's "decoder", as HuggingFace `tokenizers` runs them (tokenizers/src/decoders/):
// each rewrites the list of tokens an id list stands for, and the decoded text is the list joined. Which one a file
// names follows its model: WordPiece's "##" pieces (BERT), byte-level BPE's alphabet (GPT-2, RoBERTa, Qwen), a
// Unigram or BPE model's Metaspace "▁" (SentencePiece, often after ByteFallback's "<0xAB>" pieces).
//
// The behaviours kept on purpose, each as `tokenizers` 0.23 has it (tests/text/decode_golden_test.cpp holds us to
// it): WordPiece's cleanup runs on each piece, not on the joined text; Metaspace drops every replacement character
// of the first token, not only a leading one; ByteFallback turns a run of byte pieces that is not valid UTF-8 into
// one U+FFFD per byte; ByteLevel maps a token to bytes only when every code point of it is in the alphabet, and the
// bytes of all tokens are read as UTF-8 with each maximal invalid part replaced by U+FFFD (Rust's
// String::from_utf8_lossy).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>

#include "text/tokenizer/byte_level.hpp"
#include "text/tokenizer/components.hpp"
#include "text/tokenizer/json_fields.hpp"
#include "text/tokenizer/pattern.hpp"
#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

using json_fields::child;
using nlohmann::json;

constexpr std::string_view kSupported =
    "WordPiece, ByteLevel, Metaspace, BPEDecoder, ByteFallback, Fuse, Strip, "
    "Replace, CTC, Sequence";
constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD
// Sequences nested deeper than this are refused rather than recursed into.
constexpr int kDeepestSequence = 16;

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// The length of the valid UTF-8 sequence at `i`, or 0 with `valid_prefix` set to how many of its bytes begin one
// (the maximal invalid part, at least 1), as the Unicode standard's "substitution of maximal subparts" reads it.
std::size_t valid_sequence_at(std::string_view bytes, std::size_t i, std::size_t& valid_prefix) {
  const auto lead = static_cast<unsigned char>(bytes[i]);
  valid_prefix = 1;
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    if (i + k >= bytes.size()) return 0;
    const auto byte = static_cast<unsigned char>(bytes[i + k]);
    if (byte < (k == 1 ? low : 0x80) || byte > (k == 1 ? high : 0xBF)) return 0;
    valid_prefix = k + 1;
  }
  return length;
}

std::string from_utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    std::size_t invalid = 0;
    if (const std::size_t length = valid_sequence_at(bytes, i, invalid); length != 0) {
      out.append(bytes.substr(i, length));
      i += length;
    } else {
      out.append(kReplacementCharacter);
      i += invalid;
    }
  }
  return out;
}

// tokenizers' wordpiece::cleanup: spaces before punctuation and English contractions taken out.
std::string cleanup(std::string text) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},           {" !", "!"},   {" ,", ","},     {" ' ", "'"},   {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_all(text, from, to);
  return text;
}

class WordPieceDecoder final : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::string& token = tokens[i];
      if (i != 0) {
        // replacen(prefix, "", 1) on a token that starts with it removes the leading one.
        if (token.starts_with(prefix_)) {
          token.erase(0, prefix_.size());
        } else {
          token = std::string(" ").append(token);  // not insert(0, " "): GCC 12 warns wrongly (-Wrestrict)
        }
      }
      if (cleanup_) token = cleanup(std::move(token));
    }
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

class ByteLevelDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& token : tokens) {
      if (std::optional<std::string> decoded = from_byte_level(token)) {
        bytes += *decoded;
      } else {
        bytes += token;
      }
    }
    tokens.assign(1, from_utf8_lossy(bytes));
  }
};

class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first)
      : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i)
      replace_all(tokens[i], replacement_, i == 0 && strip_first_ ? "" : " ");
  }

 private:
  std::string replacement_;  // one code point
  bool strip_first_;         // prepend_scheme is not "never"
};

class BpeDecoder final : public Decoder {
 public:
  explicit BpeDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::size_t i = 0; i < tokens.size(); ++i) replace_all(tokens[i], suffix_, i + 1 == tokens.size() ? "" : " ");
  }

 private:
  std::string suffix_;
};

// "<0xAB>" as the byte it stands for. Rust's u8::from_str_radix, which tokenizers parses it with, takes a '+'.
std::optional<std::uint8_t> byte_piece(std::string_view token) {
  if (token.size() != 6 || !token.starts_with("<0x") || !token.ends_with('>')) return std::nullopt;
  std::string_view digits = token.substr(3, 2);
  if (digits.front() == '+') digits.remove_prefix(1);
  unsigned value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (error != std::errc() || end != digits.data() + digits.size() || value > 0xFF) return std::nullopt;
  return static_cast<std::uint8_t>(value);
}

class ByteFallbackDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    out.reserve(tokens.size());
    std::string bytes;
    const auto flush = [&] {
      if (bytes.empty()) return;
      if (from_utf8_lossy(bytes) == bytes) {
        out.push_back(bytes);
      } else {
        for (std::size_t k = 0; k < bytes.size(); ++k) out.emplace_back(kReplacementCharacter);
      }
      bytes.clear();
    };
    for (std::string& token : tokens) {
      if (const std::optional<std::uint8_t> byte = byte_piece(token)) {
        bytes.push_back(static_cast<char>(*byte));
        continue;
      }
      flush();
      out.push_back(std::move(token));
    }
    flush();
    tokens = std::move(out);
  }
};

class FuseDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string joined;
    for (const std::string& token : tokens) joined += token;
    tokens.assign(1, std::move(joined));
  }
};

class StripDecoder final : public Decoder {
 public:
  StripDecoder(char32_t content, std::size_t start, std::size_t stop) : content_(content), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& token : tokens) {
      std::vector<char32_t> chars;
      for (std::size_t i = 0; i < token.size();) chars.push_back(utf8::decode(token, i));
      std::size_t first = 0;
      while (first < std::min(start_, chars.size()) && chars[first] == content_) ++first;
      // tokenizers panics where stop reaches past the token's start; we stop at what start left.
      std::size_t last = chars.size();
      while (chars.size() - last < stop_ && last > first && chars[last - 1] == content_) --last;
      std::string kept;
      for (std::size_t i = first; i < last; ++i) utf8::append(chars[i], kept);
      token = std::move(kept);
    }
  }

 private:
  char32_t content_;
  std::size_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(Pattern pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<Range> matches;
    for (std::string& token : tokens) {
      pattern_.find_all(token, matches);
      if (matches.empty()) continue;
      std::string replaced;
      std::size_t from = 0;
      for (const Range& match : matches) {
        replaced.append(token, from, match.begin - from);
        replaced += content_;
        from = match.end;
      }
      replaced.append(token, from);
      token = std::move(replaced);
    }
  }

 private:
  Pattern pattern_;
  std::string content_;
};

// Connectionist temporal classification output: repeats merged, the pad token dropped, the word delimiter a space.
class CtcDecoder final : public Decoder {
 public:
  CtcDecoder(std::string pad, std::string delimiter, bool cleanup)
      : pad_(std::move(pad)), delimiter_(std::move(delimiter)), cleanup_(cleanup) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
    std::vector<std::string> out;
    for (std::string& token : tokens) {
      replace_all(token, pad_, "");
      if (cleanup_) {
        token = cleanup(std::move(token));
        replace_all(token, delimiter_, " ");
      }
      if (!token.empty()) out.push_back(std::move(token));
    }
    tokens = std::move(out);
  }

 private:
  std::string pad_, delimiter_;
  bool cleanup_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> decoders) : decoders_(std::move(decoders)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& decoder : decoders_) decoder->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> decoders_;
};

// A string of exactly one code point (serde's char).
Result<std::string> character_member(const json& object, std::string_view path, std::string_view key) {
  ACCEL_ASSIGN_OR_RETURN(std::string text, json_fields::string_member(object, path, key));
  std::size_t invalid = 0;
  if (text.empty() || valid_sequence_at(text, 0, invalid) != text.size())
    return json_fields::refused(child(path, key), json(text), "expected a single character");
  return text;
}

// Whether Metaspace's prepend_scheme (or the older add_prefix_space) lets the decoder drop the first token's
// replacement characters: any scheme but "never".
Result<bool> metaspace_strips_first(const json& object, std::string_view path) {
  ACCEL_ASSIGN_OR_RETURN(const json* scheme, json_fields::optional_member(object, path, "prepend_scheme"));
  if (scheme != nullptr) {
    if (!scheme->is_string() || (*scheme != "always" && *scheme != "first" && *scheme != "never"))
      return json_fields::refused(child(path, "prepend_scheme"), *scheme,
                                  "expected \"always\", \"first\" or \"never\"");
    return *scheme != "never";
  }
  return json_fields::bool_member_or(object, path, "add_prefix_space", true);
}

Result<std::unique_ptr<Decoder>> make_decoder_at(const json& object, std::string_view path, int depth) {
  ACCEL_ASSIGN_OR_RETURN(const std::string type, json_fields::type_of(object, path));
  if (type == "WordPiece") {
    ACCEL_ASSIGN_OR_RETURN(std::string prefix, json_fields::string_member_or(object, path, "prefix", "##"));
    ACCEL_ASSIGN_OR_RETURN(const bool clean, json_fields::bool_member_or(object, path, "cleanup", true));
    return std::unique_ptr<Decoder>(std::make_unique<WordPieceDecoder>(std::move(prefix), clean));
  }
  if (type == "ByteLevel") return std::unique_ptr<Decoder>(std::make_unique<ByteLevelDecoder>());
  if (type == "Metaspace") {
    ACCEL_ASSIGN_OR_RETURN(std::string replacement, character_member(object, path, "replacement"));
    ACCEL_ASSIGN_OR_RETURN(const bool strip_first, metaspace_strips_first(object, path));
    return std::unique_ptr<Decoder>(std::make_unique<MetaspaceDecoder>(std::move(replacement), strip_first));
  }
  if (type == "BPEDecoder") {
    ACCEL_ASSIGN_OR_RETURN(std::string suffix, json_fields::string_member_or(object, path, "suffix", "</w>"));
    return std::unique_ptr<Decoder>(std::make_unique<BpeDecoder>(std::move(suffix)));
  }
  if (type == "ByteFallback") return std::unique_ptr<Decoder>(std::make_unique<ByteFallbackDecoder>());
  if (type == "Fuse") return std::unique_ptr<Decoder>(std::make_unique<FuseDecoder>());
  if (type == "Strip") {
    ACCEL_ASSIGN_OR_RETURN(const std::string content, character_member(object, path, "content"));
    constexpr std::uint64_t kLongest = 1u << 20;
    ACCEL_ASSIGN_OR_RETURN(const std::uint64_t start, json_fields::count_member(object, path, "start", kLongest));
    ACCEL_ASSIGN_OR_RETURN(const std::uint64_t stop, json_fields::count_member(object, path, "stop", kLongest));
    std::size_t i = 0;
    return std::unique_ptr<Decoder>(std::make_unique<StripDecoder>(utf8::decode(content, i), start, stop));
  }
  if (type == "Replace") {
    ACCEL_ASSIGN_OR_RETURN(const json* pattern, json_fields::member(object, path, "pattern"));
    ACCEL_ASSIGN_OR_RETURN(Pattern compiled, Pattern::from_json(*pattern, child(path, "pattern")));
    ACCEL_ASSIGN_OR_RETURN(std::string content, json_fields::string_member(object, path, "content"));
    return std::unique_ptr<Decoder>(std::make_unique<ReplaceDecoder>(std::move(compiled), std::move(content)));
  }
  if (type == "CTC") {
    ACCEL_ASSIGN_OR_RETURN(std::string pad, json_fields::string_member_or(object, path, "pad_token", "<pad>"));
    ACCEL_ASSIGN_OR_RETURN(std::string delimiter,
                           json_fields::string_member_or(object, path, "word_delimiter_token", "|"));
    ACCEL_ASSIGN_OR_RETURN(const bool clean, json_fields::bool_member_or(object, path, "cleanup", true));
    return std::unique_ptr<Decoder>(std::make_unique<CtcDecoder>(std::move(pad), std::move(delimiter), clean));
  }
  if (type == "Sequence") {
    if (depth >= kDeepestSequence) return json_fields::refused(path, object, "Sequence decoders are nested too deeply");
    ACCEL_ASSIGN_OR_RETURN(const json* list, json_fields::member(object, path, "decoders"));
    const std::string list_path = child(path, "decoders");
    if (!list->is_array()) return json_fields::refused(list_path, *list, "expected a list of decoders");
    std::vector<std::unique_ptr<Decoder>> decoders;
    for (std::size_t k = 0; k < list->size(); ++k) {
      ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<Decoder> part,
                             make_decoder_at((*list)[k], json_fields::indexed(list_path, k), depth + 1));
      decoders.push_back(std::move(part));
    }
    return std::unique_ptr<Decoder>(std::make_unique<SequenceDecoder>(std::move(decoders)));
  }
  return json_fields::unsupported_type(path, type, "decoder", kSupported);
}

}  // namespace

Result<std::unique_ptr<Decoder>> make_decoder(const json& object, std::string_view path) {
  return make_decoder_at(object, path, 0);
}

}  // namespace accel::text

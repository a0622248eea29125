#include "text/tokenizer/pre_tokenizers.hpp"

#include <utf8proc.h>

#include <utility>

#include "text/tokenizer/byte_level.hpp"
#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

// Replaces every split that has no tokens yet by the non-empty parts `cut` makes of it (tokenizers'
// PreTokenizedString::split).
template <typename Cut>
void split_each(std::vector<Split>& splits, Cut&& cut) {
  std::vector<Split> out;
  out.reserve(splits.size());
  for (Split& split : splits) {
    if (split.tokens) {
      out.push_back(std::move(split));
      continue;
    }
    for (NormalizedString& part : cut(std::move(split.text))) {
      if (!part.empty()) out.push_back(Split{std::move(part), std::nullopt});
    }
  }
  splits = std::move(out);
}

// tokenizers' pattern for a code point predicate: each code point it accepts is a match of its own, and the
// code points between matches form one unmatched piece.
template <typename Predicate>
std::vector<SplitPiece> code_point_pieces(std::string_view text, Predicate&& accepts) {
  std::vector<SplitPiece> pieces;
  std::size_t unmatched_begin = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t begin = i;
    if (!accepts(utf8::decode(text, i))) continue;
    if (unmatched_begin < begin) pieces.push_back({{unmatched_begin, begin}, false});
    pieces.push_back({{begin, i}, true});
    unmatched_begin = i;
  }
  if (unmatched_begin < text.size()) pieces.push_back({{unmatched_begin, text.size()}, false});
  return pieces;
}

template <typename Predicate>
std::vector<NormalizedString> split_at(const NormalizedString& text, Predicate&& accepts, SplitBehavior behavior) {
  const std::vector<SplitPiece> pieces = code_point_pieces(text.normalized(), accepts);
  return text.split(std::span<const SplitPiece>(pieces), behavior);
}

utf8proc_category_t category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

// ASCII punctuation (which takes symbols such as '$' and '+') or a Unicode punctuation category (utf8proc's, which
// tokenizers' older tables answer otherwise for some recent code points: Note [Unicode versions] in normalizer.cpp).
bool is_punctuation(char32_t c) {
  if (c < 0x80)
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
  switch (category(c)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: return true;
    default: return false;
  }
}

// Rust's char::is_numeric: any number category (Nd, Nl, No).
bool is_numeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  const utf8proc_category_t cat = category(c);
  return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}

bool is_white_space(char32_t c) { return utf8::is_white_space(c); }

// The expressions tokenizers hard-codes. Whitespace's is compiled by Rust's regex crate, not Oniguruma, so its
// \w (Alphabetic, M, Nd, Pc, Join_Control) and \s (White_Space) are spelled out.
const Pattern& gpt2_pattern() {
  static const Pattern pattern =
      *Pattern::regex(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)", "ByteLevel");
  return pattern;
}

const Pattern& whitespace_pattern() {
  static const Pattern pattern = *Pattern::regex(
      R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}]+|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}\t-\r\x{85}\p{Z}]+)",
      "Whitespace");
  return pattern;
}

std::vector<NormalizedString> split_with(const Pattern& pattern, const NormalizedString& text, bool invert,
                                         SplitBehavior behavior) {
  std::vector<SplitPiece> pieces;
  pattern.find_pieces(text.normalized(), invert, pieces);
  return text.split(std::span<const SplitPiece>(pieces), behavior);
}

// tokenizers' two passes (split at white space, removed; then at punctuation, isolated) in one: the runs of other
// code points and each punctuation mark, each sliced from the text once rather than from a slice of it.
class BertPreTokenizer final : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [](NormalizedString text) {
      std::vector<NormalizedString> parts;
      const std::string_view utf8_text = text.normalized();
      std::size_t word_begin = 0;
      for (std::size_t i = 0; i < utf8_text.size();) {
        const std::size_t at = i;
        const char32_t c = utf8::decode(utf8_text, i);
        const bool space = is_white_space(c);
        if (!space && !is_punctuation(c)) continue;
        if (at > word_begin) parts.push_back(text.slice(Range{word_begin, at}));
        if (!space) parts.push_back(text.slice(Range{at, i}));
        word_begin = i;
      }
      if (utf8_text.size() > word_begin) parts.push_back(text.slice(Range{word_begin, utf8_text.size()}));
      return parts;
    });
  }
};

class Whitespace final : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [](NormalizedString text) {
      return split_with(whitespace_pattern(), text, true, SplitBehavior::removed);
    });
  }
};

class WhitespaceSplit final : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [](NormalizedString text) { return split_at(text, is_white_space, SplitBehavior::removed); });
  }
};

class Punctuation final : public PreTokenizer {
 public:
  explicit Punctuation(SplitBehavior behavior) : behavior_(behavior) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [this](NormalizedString text) { return split_at(text, is_punctuation, behavior_); });
  }

 private:
  SplitBehavior behavior_;
};

class Digits final : public PreTokenizer {
 public:
  explicit Digits(bool individual_digits)
      : behavior_(individual_digits ? SplitBehavior::isolated : SplitBehavior::contiguous) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [this](NormalizedString text) { return split_at(text, is_numeric, behavior_); });
  }

 private:
  SplitBehavior behavior_;
};

class Metaspace final : public PreTokenizer {
 public:
  explicit Metaspace(const MetaspaceOptions& options) : options_(options) {
    utf8::append(options.replacement, replacement_utf8_);
  }

  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [this](NormalizedString text) {
      replace_spaces(text);
      const bool starts_with_replacement = text.normalized().starts_with(replacement_utf8_);
      const bool prepend = options_.prepend_scheme == PrependScheme::always ||
                           (options_.prepend_scheme == PrependScheme::first && text.original_range().begin == 0);
      if (prepend && !starts_with_replacement) text.prepend(replacement_utf8_);
      if (!options_.split) return std::vector<NormalizedString>{std::move(text)};
      const char32_t replacement = options_.replacement;
      return split_at(
          text, [replacement](char32_t c) { return c == replacement; }, SplitBehavior::merged_with_next);
    });
  }

 private:
  // Each ' ' becomes the replacement, aligned to the space.
  void replace_spaces(NormalizedString& text) const {
    const std::string& normalized = text.normalized();
    if (normalized.find(' ') == std::string::npos) return;
    std::vector<CodePointChange> changes;
    changes.reserve(normalized.size());
    std::size_t i = 0;
    while (i < normalized.size()) {
      const char32_t c = utf8::decode(normalized, i);
      changes.push_back({c == U' ' ? options_.replacement : c, 0});
    }
    text.transform(changes, 0);
  }

  MetaspaceOptions options_;
  std::string replacement_utf8_;
};

class ByteLevel final : public PreTokenizer {
 public:
  explicit ByteLevel(const ByteLevelOptions& options) : options_(options) {}

  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [this](NormalizedString text) {
      if (options_.add_prefix_space && !text.normalized().starts_with(' ')) text.prepend(" ");
      if (!options_.use_regex) return std::vector<NormalizedString>{std::move(text)};
      return split_with(gpt2_pattern(), text, false, SplitBehavior::isolated);
    });
    for (Split& split : splits) {
      if (!split.tokens) to_byte_level(split.text);
    }
  }

 private:
  ByteLevelOptions options_;
};

class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(Pattern pattern, SplitBehavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}

  void pre_tokenize(std::vector<Split>& splits) const override {
    split_each(splits, [this](NormalizedString text) { return split_with(pattern_, text, invert_, behavior_); });
  }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

class Sequence final : public PreTokenizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void pre_tokenize(std::vector<Split>& splits) const override {
    for (const auto& step : steps_) step->pre_tokenize(splits);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

}  // namespace

std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer() { return std::make_unique<BertPreTokenizer>(); }
std::unique_ptr<PreTokenizer> make_whitespace() { return std::make_unique<Whitespace>(); }
std::unique_ptr<PreTokenizer> make_whitespace_split() { return std::make_unique<WhitespaceSplit>(); }
std::unique_ptr<PreTokenizer> make_punctuation(SplitBehavior behavior) {
  return std::make_unique<Punctuation>(behavior);
}
std::unique_ptr<PreTokenizer> make_digits(bool individual_digits) {
  return std::make_unique<Digits>(individual_digits);
}
std::unique_ptr<PreTokenizer> make_metaspace(const MetaspaceOptions& options) {
  return std::make_unique<Metaspace>(options);
}
std::unique_ptr<PreTokenizer> make_byte_level(const ByteLevelOptions& options) {
  return std::make_unique<ByteLevel>(options);
}
std::unique_ptr<PreTokenizer> make_split(Pattern pattern, SplitBehavior behavior, bool invert) {
  return std::make_unique<SplitPreTokenizer>(std::move(pattern), behavior, invert);
}
std::unique_ptr<PreTokenizer> make_sequence(std::vector<std::unique_ptr<PreTokenizer>> steps) {
  return std::make_unique<Sequence>(std::move(steps));
}

}  // namespace accel::text

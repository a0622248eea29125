// make_normalizer and the normalizers of a tokenizer.json, each as tokenizers 0.23.3 defines it
// (tokenizers/src/normalizers/): the text they produce and the alignments they leave. Unicode properties come from
// utf8proc, which answers otherwise than tokenizers' tables for some recent code points (Note [Unicode versions]).
#include <utf8proc.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/tokenizer/components.hpp"
#include "text/tokenizer/json_fields.hpp"
#include "text/tokenizer/pattern.hpp"
#include "text/tokenizer/precompiled_charsmap.hpp"
#include "text/tokenizer/unicode_normalization.hpp"
#include "text/tokenizer/utf8.hpp"

// Note [Unicode versions]
// `tokenizers` takes general categories (the Cc/Cf/Co BertNormalizer drops, the Mn it strips, the P* that
// BertPreTokenizer splits at) from the unicode_categories crate, whose tables predate Unicode 9.0, its normalization
// forms from unicode-normalization-alignments (Unicode 9.0), and lowercase mappings and White_Space from the Rust
// standard library (Unicode 16). utf8proc 2.8 speaks Unicode 15.0 for all of them. The two disagree only on code
// points assigned or recategorised since Unicode 9.0, in scripts rarely met: marks of newer scripts (U+0898..U+089F,
// U+1ABF..U+1ACE, most of U+11xxx) that `tokenizers` keeps and we strip, newer format controls (U+0890, U+110CD,
// U+13430..U+1343F) that it keeps and we drop, newer punctuation (U+061D, U+2E43..U+2E5D) that it leaves inside
// words, U+1734 (Mn then, Mc now), U+166D (Po then, So now), and the case pairs of Unicode 16 (U+A7CB,
// U+10D50..U+10D65) that utf8proc does not know. Encoding each of the 1,112,064 code points (in three contexts) with
// all-MiniLM-L6-v2 and tokenizers 0.23.3, 568 get other ids. We follow utf8proc rather than carry a table of those
// differences; everything assigned by Unicode 8.0 agrees, and the golden corpora (tests/text/) draw only from it.

namespace accel::text {
namespace {

using json_fields::child;
using nlohmann::json;

constexpr std::string_view kSupported =
    "BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Replace, Prepend, Precompiled, Sequence";

// Sequences nested deeper than this are refused rather than followed (serde_json, which reads the file for
// tokenizers, stops at 128 levels of JSON).
constexpr std::size_t kDeepestSequence = 32;

// tokenizers' NormalizedString::filter, with map() folded in: code points `keep` rejects are removed, each removal
// charged to the kept code point before it (or to the start of the text), and the kept ones become map(c).
template <class Keep, class Map>
void filter_map(NormalizedString& text, Keep keep, Map map) {
  const std::string_view utf8_text = text.normalized();
  std::vector<CodePointChange> changes;
  changes.reserve(utf8_text.size());
  std::size_t removed_at_start = 0;
  bool changed = false;
  for (std::size_t i = 0; i < utf8_text.size();) {
    const char32_t c = utf8::decode(utf8_text, i);
    if (!keep(c)) {
      changed = true;
      if (changes.empty()) {
        ++removed_at_start;
      } else {
        --changes.back().change;
      }
      continue;
    }
    const char32_t mapped = map(c);
    changed = changed || mapped != c;
    changes.push_back({mapped, 0});
  }
  if (changed) text.transform(changes, removed_at_start);
}

utf8proc_category_t category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

// -- BertNormalizer -------------------------------------------------------------------------------------------------

// tokenizers' is_control: the categories Cc, Cf and Co (its unicode_categories "other" leaves unassigned code
// points alone), \t \n \r excepted. Surrogates cannot occur in UTF-8.
bool is_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  if (c < 0x80) return c < 0x20 || c == 0x7F;  // ASCII's only Cc, Cf or Co code points
  const utf8proc_category_t cat = category(c);
  return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF || cat == UTF8PROC_CATEGORY_CO;
}

// tokenizers' own definition of a Chinese character: the CJK Unified and Compatibility Ideographs blocks as BERT
// listed them, its fifth range starting at U+2B920 where BERT's starts at U+2B820.
bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// A space on each side of each Chinese character: the first space stands for the character, which with the
// second space is inserted after it, so all three take its alignment.
void pad_chinese_chars(NormalizedString& text) {
  const std::string_view utf8_text = text.normalized();
  std::vector<CodePointChange> changes;
  changes.reserve(utf8_text.size());
  bool found = false;
  for (std::size_t i = 0; i < utf8_text.size();) {
    const char32_t c = utf8::decode(utf8_text, i);
    if (is_chinese_char(c)) {
      found = true;
      changes.insert(changes.end(), {{U' ', 0}, {c, 1}, {U' ', 1}});
    } else {
      changes.push_back({c, 0});
    }
  }
  if (found) text.transform(changes, 0);
}

class BertNormalizer final : public Normalizer {
 public:
  struct Options {
    bool clean_text = true;
    bool handle_chinese_chars = true;
    bool strip_accents = true;
    bool lowercase = true;
  };
  explicit BertNormalizer(Options options) : options_(options) {}

  void normalize(NormalizedString& text) const override {
    if (options_.clean_text) {
      filter_map(
          text, [](char32_t c) { return c != 0 && c != 0xFFFD && !is_control(c); },
          [](char32_t c) { return utf8::is_white_space(c) ? U' ' : c; });
    }
    if (options_.handle_chinese_chars) pad_chinese_chars(text);
    if (options_.strip_accents) {
      normalize_unicode(text, UnicodeForm::nfd);
      filter_map(
          text, [](char32_t c) { return c < 0x300 || category(c) != UTF8PROC_CATEGORY_MN; },
          [](char32_t c) { return c; });
    }
    if (options_.lowercase) text.lowercase();
  }

 private:
  Options options_;
};

// -- the normalizers without options -----------------------------------------------------------------------------

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(UnicodeForm form) : form_(form) {}
  void normalize(NormalizedString& text) const override { normalize_unicode(text, form_); }

 private:
  UnicodeForm form_;
};

class Lowercase final : public Normalizer {
 public:
  void normalize(NormalizedString& text) const override { text.lowercase(); }
};

// Removes every combining mark (general category M: Mn, Mc and Me), as the crate's is_combining_mark tests it.
class StripAccents final : public Normalizer {
 public:
  void normalize(NormalizedString& text) const override {
    filter_map(
        text,
        [](char32_t c) {
          if (c < 0x300) return true;
          const utf8proc_category_t cat = category(c);
          return cat != UTF8PROC_CATEGORY_MN && cat != UTF8PROC_CATEGORY_MC && cat != UTF8PROC_CATEGORY_ME;
        },
        [](char32_t c) { return c; });
  }
};

class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(NormalizedString& text) const override { text.strip(left_, right_); }

 private:
  bool left_;
  bool right_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(NormalizedString& text) const override {
    if (!text.empty()) text.prepend(prefix_);
  }

 private:
  std::string prefix_;
};

class Precompiled final : public Normalizer {
 public:
  explicit Precompiled(PrecompiledCharsmap charsmap) : charsmap_(std::move(charsmap)) {}
  void normalize(NormalizedString& text) const override { charsmap_.normalize(text); }

 private:
  PrecompiledCharsmap charsmap_;
};

class Sequence final : public Normalizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<Normalizer>> normalizers) : normalizers_(std::move(normalizers)) {}
  void normalize(NormalizedString& text) const override {
    for (const auto& normalizer : normalizers_) normalizer->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> normalizers_;
};

// -- Replace --------------------------------------------------------------------------------------------------

// tokenizers replaces each match on its own: the matched code points are removed and the content inserted, every
// content code point taking the alignment of the match's last byte. We get the same with one transform over as
// many matches as it can express: the removal is charged to the code point before the match (or to the start of
// the transformed range), and the content inserted after it. A match right after another's inserted content has
// no code point to charge; its first content code point can stand for the match's first code point instead when
// that has the alignment of its last byte (always so for a one-code-point match), else a new transform starts.
class Replace final : public Normalizer {
 public:
  Replace(Pattern pattern, std::string_view content) : pattern_(std::move(pattern)) {
    for (std::size_t i = 0; i < content.size();) content_.push_back(utf8::decode(content, i));
  }

  void normalize(NormalizedString& text) const override {
    std::vector<Range> matches;
    pattern_.find_all(text.normalized(), matches);
    if (matches.empty()) return;
    const std::string_view utf8_text = text.normalized();
    std::vector<Transform> transforms;
    for (const Range& match : matches) {
      if (!transforms.empty()) {
        Transform& current = transforms.back();
        for (std::size_t i = current.range.end; i < match.begin;)
          current.changes.push_back({utf8::decode(utf8_text, i), 0});
        current.range.end = match.begin;
      }
      if (transforms.empty() || !absorb(text, match, transforms.back())) {
        transforms.push_back(Transform{Range{match.begin, match.begin}, 0, {}});
        absorb(text, match, transforms.back());
      }
      transforms.back().range.end = match.end;
    }
    // Right to left, so that each range still holds the bytes it was built from.
    for (auto it = transforms.rbegin(); it != transforms.rend(); ++it) {
      text.transform(it->range, it->changes, it->initial_removed);
    }
  }

 private:
  struct Transform {
    Range range;
    std::size_t initial_removed = 0;
    std::vector<CodePointChange> changes;
  };

  // Adds `match`, which directly follows what `transform` covers, to it; false when it cannot be expressed there.
  bool absorb(const NormalizedString& text, Range match, Transform& transform) const {
    std::size_t removed = 0;
    for (std::size_t i = match.begin; i < match.end; ++i) {
      removed += (static_cast<unsigned char>(text.normalized()[i]) & 0xC0) != 0x80 ? 1 : 0;
    }
    std::size_t first_inserted = 0;
    if (transform.changes.empty()) {
      transform.initial_removed += removed;
    } else if (transform.changes.back().change <= 0) {
      transform.changes.back().change -= static_cast<int>(removed);
    } else if (text.alignment(match.begin) == text.alignment(match.end - 1)) {
      // The last change is inserted content, so content_ is not empty.
      transform.changes.push_back({content_.front(), 1 - static_cast<int>(removed)});
      first_inserted = 1;
    } else {
      return false;
    }
    for (std::size_t k = first_inserted; k < content_.size(); ++k) transform.changes.push_back({content_[k], 1});
    return true;
  }

  Pattern pattern_;
  std::vector<char32_t> content_;
};

Result<std::unique_ptr<Normalizer>> make_at_depth(const json& object, std::string_view path, std::size_t depth);

Result<std::unique_ptr<Normalizer>> make_sequence(const json& object, std::string_view path, std::size_t depth) {
  const std::string list_path = child(path, "normalizers");
  ACCEL_ASSIGN_OR_RETURN(const json* list, json_fields::member(object, path, "normalizers"));
  if (!list->is_array()) return json_fields::refused(list_path, *list, "expected an array of normalizers");
  if (depth >= kDeepestSequence) {
    return json_fields::refused(list_path, *list,
                                "Sequences nested more than " + std::to_string(kDeepestSequence) + " deep");
  }
  std::vector<std::unique_ptr<Normalizer>> normalizers;
  normalizers.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    ACCEL_ASSIGN_OR_RETURN(auto normalizer, make_at_depth((*list)[i], json_fields::indexed(list_path, i), depth + 1));
    normalizers.push_back(std::move(normalizer));
  }
  return std::make_unique<Sequence>(std::move(normalizers));
}

Result<std::unique_ptr<Normalizer>> make_at_depth(const json& object, std::string_view path, std::size_t depth) {
  ACCEL_ASSIGN_OR_RETURN(const std::string type, json_fields::type_of(object, path));
  if (type == "BertNormalizer") {
    BertNormalizer::Options options;
    ACCEL_ASSIGN_OR_RETURN(options.clean_text, json_fields::bool_member(object, path, "clean_text"));
    ACCEL_ASSIGN_OR_RETURN(options.handle_chinese_chars,
                           json_fields::bool_member(object, path, "handle_chinese_chars"));
    ACCEL_ASSIGN_OR_RETURN(options.lowercase, json_fields::bool_member(object, path, "lowercase"));
    // A missing or null strip_accents follows lowercase.
    ACCEL_ASSIGN_OR_RETURN(options.strip_accents,
                           json_fields::bool_member_or(object, path, "strip_accents", options.lowercase));
    return std::make_unique<BertNormalizer>(options);
  }
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfc);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfd);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfkc);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfkd);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "Strip") {
    ACCEL_ASSIGN_OR_RETURN(const bool left, json_fields::bool_member(object, path, "strip_left"));
    ACCEL_ASSIGN_OR_RETURN(const bool right, json_fields::bool_member(object, path, "strip_right"));
    return std::make_unique<Strip>(left, right);
  }
  if (type == "Replace") {
    ACCEL_ASSIGN_OR_RETURN(const json* pattern_object, json_fields::member(object, path, "pattern"));
    ACCEL_ASSIGN_OR_RETURN(Pattern pattern, Pattern::from_json(*pattern_object, child(path, "pattern")));
    ACCEL_ASSIGN_OR_RETURN(const std::string content, json_fields::string_member(object, path, "content"));
    return std::make_unique<Replace>(std::move(pattern), content);
  }
  if (type == "Prepend") {
    ACCEL_ASSIGN_OR_RETURN(std::string prefix, json_fields::string_member(object, path, "prepend"));
    return std::make_unique<Prepend>(std::move(prefix));
  }
  if (type == "Precompiled") {
    ACCEL_ASSIGN_OR_RETURN(const std::string base64, json_fields::string_member(object, path, "precompiled_charsmap"));
    ACCEL_ASSIGN_OR_RETURN(PrecompiledCharsmap charsmap,
                           PrecompiledCharsmap::from_base64(base64, child(path, "precompiled_charsmap")));
    return std::make_unique<Precompiled>(std::move(charsmap));
  }
  if (type == "Sequence") return make_sequence(object, path, depth);
  return json_fields::unsupported_type(path, type, "normalizer", kSupported);
}

}  // namespace

Result<std::unique_ptr<Normalizer>> make_normalizer(const nlohmann::json& object, std::string_view path) {
  return make_at_depth(object, path, 0);
}

}  // namespace accel::text

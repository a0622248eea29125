#include "text/tokenizer/added_vocabulary.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <utility>

#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

// Rust regex's Unicode \w: Alphabetic, marks, decimal digits, connector punctuation and the joiners. utf8proc
// has no Alphabetic property; letters and letter numbers cover it but for the few symbols that are
// Other_Alphabetic (circled and squared Latin letters).
bool is_word_character(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  if (c == 0x200C || c == 0x200D) return true;
  if ((c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
      (c >= 0x1F170 && c <= 0x1F189)) {
    return true;
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_PC: return true;
    default: return false;
  }
}

// The start of the code point that ends at byte `end` (> 0) of `text`.
std::size_t previous_code_point(std::string_view text, std::size_t end) {
  std::size_t begin = end - 1;
  while (begin > 0 && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) --begin;
  return begin;
}

bool word_character_before(std::string_view text, std::size_t position) {
  if (position == 0) return false;
  std::size_t i = previous_code_point(text, position);
  return is_word_character(utf8::decode(text, i));
}

bool word_character_at(std::string_view text, std::size_t position) {
  if (position >= text.size()) return false;
  return is_word_character(utf8::decode(text, position));
}

// Where the run of whitespace that ends at `end` begins.
std::size_t whitespace_run_begin(std::string_view text, std::size_t end) {
  while (end > 0) {
    const std::size_t begin = previous_code_point(text, end);
    std::size_t i = begin;
    if (!utf8::is_white_space(utf8::decode(text, i))) break;
    end = begin;
  }
  return end;
}

// Where the run of whitespace that begins at `begin` ends.
std::size_t whitespace_run_end(std::string_view text, std::size_t begin) {
  while (begin < text.size()) {
    std::size_t next = begin;
    if (!utf8::is_white_space(utf8::decode(text, next))) break;
    begin = next;
  }
  return begin;
}

}  // namespace

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer)
    : tokens_(std::move(tokens)) {
  matched_forms_.reserve(tokens_.size());
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const AddedToken& token = tokens_[i];
    std::string form = token.content;
    if (token.normalized && normalizer != nullptr) {
      NormalizedString normalized(token.content);
      normalizer->normalize(normalized);
      form = normalized.normalized();
    }
    // A token whose form is empty can never be found.
    if (!form.empty()) {
      PatternIndex& index = token.normalized ? normalized_patterns_ : raw_patterns_;
      index[static_cast<unsigned char>(form.front())].push_back({form, i});
    }
    matched_forms_.push_back(std::move(form));
    by_content_.emplace(token.content, i);
    by_id_.emplace(token.id, i);
  }
  for (PatternIndex* index : {&raw_patterns_, &normalized_patterns_}) {
    for (std::vector<Pattern>& patterns : *index) {
      std::stable_sort(patterns.begin(), patterns.end(),
                       [](const Pattern& a, const Pattern& b) { return a.text.size() > b.text.size(); });
    }
  }
}

std::vector<AddedVocabulary::Piece> AddedVocabulary::find_matches(const PatternIndex& patterns,
                                                                  std::string_view text) const {
  std::vector<Piece> pieces;
  std::size_t covered = 0;  // where the last piece ends
  std::size_t position = 0;
  while (position < text.size()) {
    const Pattern* found = nullptr;
    for (; position < text.size() && found == nullptr; ++position) {
      for (const Pattern& pattern : patterns[static_cast<unsigned char>(text[position])]) {
        if (text.substr(position).starts_with(pattern.text)) {
          found = &pattern;
          break;
        }
      }
    }
    if (found == nullptr) break;
    std::size_t begin = position - 1;
    std::size_t end = begin + found->text.size();
    // The search goes on after the match as found, whatever its part grows or shrinks to.
    position = end;

    const AddedToken& token = tokens_[found->token];
    if (token.single_word && (word_character_before(text, begin) || word_character_at(text, end))) continue;
    // Whitespace an earlier part took stays there for lstrip; but, as in `tokenizers`, a match that starts in
    // whitespace an rstrip token took keeps it too, and the two parts overlap.
    if (token.lstrip) begin = std::max(whitespace_run_begin(text, begin), covered);
    if (token.rstrip) end = whitespace_run_end(text, end);

    if (covered < begin) pieces.push_back({{covered, begin}, std::nullopt});
    pieces.push_back({{begin, end}, found->token});
    covered = end;
  }
  if (covered < text.size()) pieces.push_back({{covered, text.size()}, std::nullopt});
  return pieces;
}

void AddedVocabulary::append_splits(const PatternIndex& patterns, const NormalizedString& text,
                                    std::vector<Split>& out) const {
  for (const Piece& piece : find_matches(patterns, text.normalized())) {
    NormalizedString part = text.slice(piece.range);
    if (part.empty()) continue;
    if (!piece.token) {
      out.push_back({std::move(part), std::nullopt});
      continue;
    }
    std::vector<Token> token{{tokens_[*piece.token].id, part.normalized(), Range{0, part.size()}}};
    out.push_back({std::move(part), std::move(token)});
  }
}

std::vector<Split> AddedVocabulary::extract_and_normalize(std::string_view text, const Normalizer* normalizer) const {
  std::vector<Split> raw_parts;
  append_splits(raw_patterns_, NormalizedString(text), raw_parts);

  std::vector<Split> splits;
  splits.reserve(raw_parts.size());
  for (Split& part : raw_parts) {
    if (part.tokens) {
      splits.push_back(std::move(part));
      continue;
    }
    if (normalizer != nullptr) normalizer->normalize(part.text);
    append_splits(normalized_patterns_, part.text, splits);
  }
  return splits;
}

std::optional<std::int32_t> AddedVocabulary::token_to_id(std::string_view content) const {
  const auto found = by_content_.find(std::string(content));
  if (found == by_content_.end()) return std::nullopt;
  return tokens_[found->second].id;
}

std::optional<std::string_view> AddedVocabulary::id_to_token(std::int32_t id) const {
  const auto found = by_id_.find(id);
  if (found == by_id_.end()) return std::nullopt;
  return matched_forms_[found->second];
}

bool AddedVocabulary::is_special(std::int32_t id) const {
  const auto found = by_id_.find(id);
  return found != by_id_.end() && tokens_[found->second].special;
}

std::size_t AddedVocabulary::id_limit() const noexcept {
  std::size_t limit = 0;
  for (const AddedToken& token : tokens_) limit = std::max(limit, static_cast<std::size_t>(token.id) + 1);
  return limit;
}

}  // namespace accel::text

// accel::text::AddedVocabulary — the tokens of a tokenizer.json's "added_tokens", cut out of the text before the
// model sees it, as HuggingFace `tokenizers`' AddedVocabulary (tokenizer/added_vocabulary.rs) does:
//   1. tokens whose "normalized" is false are found in the raw text;
//   2. every other part is normalized, and tokens whose "normalized" is true are found in it, matched in the form
//      the normalizer gives their content ("Yes" under a lowercasing normalizer matches "YES" and "yes").
// Each search is leftmost-longest and does not overlap; a match of a "single_word" token with a word character
// (Rust regex's Unicode \w) right before or after it is dropped, and "lstrip"/"rstrip" tokens take the whitespace
// on their left/right into their part. The part an added token covers is its token's value, stripped whitespace
// included, as in `tokenizers`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/tokenizer/components.hpp"

namespace accel::text {

struct AddedToken {
  std::string content;
  std::int32_t id = 0;
  bool special = false;
  bool normalized = true;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
};

class AddedVocabulary {
 public:
  AddedVocabulary() = default;
  // `tokens` hold distinct contents and ids, none empty. `normalizer` (null for none) gives the form in which
  // normalized tokens are matched; it is not kept.
  AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer);

  // The text (valid UTF-8, the whole of what the caller passed) as splits that cover it in order: added tokens
  // with their token set, the other parts normalized by `normalizer` (null for none). Empty parts are left out.
  [[nodiscard]] std::vector<Split> extract_and_normalize(std::string_view text, const Normalizer* normalizer) const;

  [[nodiscard]] std::optional<std::int32_t> token_to_id(std::string_view content) const;
  // The content, or for a normalized token the form it is matched in (what `tokenizers` gives for decoding).
  [[nodiscard]] std::optional<std::string_view> id_to_token(std::int32_t id) const;
  // Whether `id` is an added token marked "special" (what decoding with skip_special_tokens leaves out).
  [[nodiscard]] bool is_special(std::int32_t id) const;
  [[nodiscard]] std::size_t size() const noexcept { return tokens_.size(); }
  // One more than the largest id; 0 when there are none.
  [[nodiscard]] std::size_t id_limit() const noexcept;

 private:
  // A pattern the matcher looks for, and the token it stands for.
  struct Pattern {
    std::string text;
    std::size_t token = 0;  // index into tokens_
  };
  // Patterns by first byte, longest first: most positions of a text are passed over with one load.
  using PatternIndex = std::array<std::vector<Pattern>, 256>;
  // A part of a string: an added token (its index into tokens_), or text between them.
  struct Piece {
    Range range;
    std::optional<std::size_t> token;
  };
  // The pieces that cover `text` (`tokenizers`' find_matches): a leftmost-longest search, as `tokenizers`'
  // Aho-Corasick automaton (daachorse, MatchKind::LeftmostLongest) does, with the single_word, lstrip and rstrip
  // rules applied to each match.
  [[nodiscard]] std::vector<Piece> find_matches(const PatternIndex& patterns, std::string_view text) const;
  // Appends the pieces of `text` to `out`, added tokens with their token set; empty pieces are left out.
  void append_splits(const PatternIndex& patterns, const NormalizedString& text, std::vector<Split>& out) const;

  std::vector<AddedToken> tokens_;
  std::vector<std::string> matched_forms_;  // per token: what it is matched as
  PatternIndex raw_patterns_;               // tokens whose normalized is false
  PatternIndex normalized_patterns_;
  std::unordered_map<std::string, std::size_t> by_content_;
  std::unordered_map<std::int32_t, std::size_t> by_id_;
};

}  // namespace accel::text

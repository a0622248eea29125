// accel::text::Pattern — what a tokenizer.json's Split pre-tokenizer and Replace normalizer match: a literal string
// ({"String": "..."}) or a regular expression ({"Regex": "..."}). Expressions run on PCRE2 in UTF mode with Unicode
// properties (PCRE2_UTF | PCRE2_UCP), so \p{L}, \s and \w mean what they mean for tokenizers' Oniguruma patterns.
// Immutable and shareable across threads (each call takes its own match data).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"
#include "text/tokenizer/normalized_string.hpp"

namespace accel::text {

class Pattern {
 public:
  // invalid_argument naming `path` and the expression, with PCRE2's message and offset, when it does not compile.
  static Result<Pattern> regex(std::string_view expression, std::string_view path);
  static Pattern literal(std::string text);
  // The {"String": ...} or {"Regex": ...} object at `path`.
  static Result<Pattern> from_json(const nlohmann::json& object, std::string_view path);

  // The non-overlapping matches in `utf8`, left to right, as byte ranges; empty matches are left out (tokenizers
  // does cut the text at them: see find_pieces). Replaces the contents of `out`.
  void find_all(std::string_view utf8, std::vector<Range>& out) const;
  // The whole of `utf8` as tokenizers' Pattern::find_matches cuts it: matched and unmatched pieces in order, empty
  // matches included (a pattern that can match nothing, like "x*" or "(?=b)", still cuts the text there, and
  // split() then drops the empty parts). `invert` swaps matched and unmatched. Replaces the contents of `out`.
  void find_pieces(std::string_view utf8, bool invert, std::vector<SplitPiece>& out) const;

  [[nodiscard]] const std::string& source() const noexcept { return source_; }

 private:
  struct Compiled;  // the PCRE2 code; null for a literal
  Pattern(std::string source, std::shared_ptr<const Compiled> compiled)
      : source_(std::move(source)), compiled_(std::move(compiled)) {}

  std::string source_;
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace accel::text

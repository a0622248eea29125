// accel::text::NormalizedString — a piece of text as the tokenizer pipeline rewrites it, with the original bytes
// every normalized byte came from, so that a token's offsets can always be given in the caller's text.
//
// The model is HuggingFace `tokenizers`' NormalizedString (tokenizer/normalizer.rs), which every component of a
// tokenizer.json is defined against; agreeing with its alignment rules is what makes our offsets equal to theirs:
//   * `normalized` is UTF-8; `alignment(i)` is the original byte range [begin, end) that normalized byte i
//     stands for, as absolute offsets into the text the caller passed to the tokenizer (a slice keeps them).
//   * transform() replaces a byte range of the normalized text by new code points, each tagged with its change:
//       0   it stands for the next old code point (replacing it, or keeping it);
//       +1  it is inserted: it takes the alignment of the old byte just before it ((0, 0) at the very start);
//       -n  it stands for the next old code point, and the n old code points after that are removed.
//     `initial_removed` old code points are dropped before the first new one.
//
// Strings handed in are valid UTF-8 (the tokenizer validates the caller's text once); every byte offset taken
// or returned lies on a code point boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accel/text/tokenizer.hpp"  // Range

namespace accel::text {

// What split() does with the parts of the text a pattern matched (tokenizers' SplitDelimiterBehavior).
enum class SplitBehavior : std::uint8_t {
  removed,               // matches are dropped
  isolated,              // each match is a part of its own
  merged_with_previous,  // a match joins the part before it
  merged_with_next,      // a match joins the part after it
  contiguous,            // consecutive matches form one part
};

// A part of a string and whether a pattern matched it; a list of them covers the string in order (tokenizers'
// Pattern::find_matches). Unlike a list of matches, it can hold adjacent unmatched parts, which an inverted
// pattern produces and split() keeps apart.
struct SplitPiece {
  Range range;
  bool matched = false;
  friend bool operator==(const SplitPiece&, const SplitPiece&) = default;
};

// The pieces that `matches` (sorted, disjoint, non-empty) cut a string of `size` bytes into; `invert` swaps
// matched and unmatched.
[[nodiscard]] std::vector<SplitPiece> split_pieces(std::size_t size, std::span<const Range> matches, bool invert);

struct CodePointChange {
  char32_t code_point = 0;
  int change = 0;  // see transform()
};

class NormalizedString {
 public:
  NormalizedString() = default;
  // `utf8` is the whole original text (or a part of it starting at byte `original_offset` of the caller's text).
  explicit NormalizedString(std::string_view utf8, std::size_t original_offset = 0);

  [[nodiscard]] const std::string& normalized() const noexcept { return normalized_; }
  [[nodiscard]] bool empty() const noexcept { return normalized_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return normalized_.size(); }

  // The original range (absolute) that normalized byte i stands for.
  [[nodiscard]] Range alignment(std::size_t i) const noexcept { return alignments_[i]; }
  // The original range (absolute) covered by the normalized bytes [range.begin, range.end): from the first byte's
  // begin to the last byte's end; an empty range maps to an empty range at the original position it falls on.
  [[nodiscard]] Range original_range(Range normalized_range) const;
  // The original range of the whole string (absolute).
  [[nodiscard]] Range original_range() const noexcept { return original_; }

  // See the comment at the top. `range` is in normalized bytes.
  void transform(Range range, std::span<const CodePointChange> changes, std::size_t initial_removed);
  void transform(std::span<const CodePointChange> changes, std::size_t initial_removed) {
    transform(Range{0, normalized_.size()}, changes, initial_removed);
  }

  // Common transforms, each as tokenizers defines it.
  void prepend(std::string_view utf8);  // inserted before the first code point (aligned to it)
  void append(std::string_view utf8);   // inserted after the last code point (aligned to it)
  void lowercase();                     // full lowercase mapping of each code point
  void strip(bool left, bool right);    // Unicode White_Space at either end

  // The normalized bytes [range.begin, range.end) as a NormalizedString of their own, alignments kept.
  [[nodiscard]] NormalizedString slice(Range range) const;

  // Cuts the string at the matched ranges (sorted, disjoint, non-empty, in normalized bytes) as `behavior` says.
  // Parts that would be empty are left out.
  [[nodiscard]] std::vector<NormalizedString> split(std::span<const Range> matches, SplitBehavior behavior) const;
  // The same with the pieces given (see SplitPiece).
  [[nodiscard]] std::vector<NormalizedString> split(std::span<const SplitPiece> pieces, SplitBehavior behavior) const;

 private:
  std::string normalized_;
  std::vector<Range> alignments_;  // one per byte of normalized_
  Range original_;                 // absolute original range of the whole string
};

}  // namespace accel::text

#include "text/tokenizer/normalized_string.hpp"

#include <utf8proc.h>

#include <algorithm>

#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

// Rust's char::to_lowercase, which tokenizers uses: the simple mapping, except for the one code point whose
// unconditional lowercase (SpecialCasing.txt) is two code points.
void append_lowercase(char32_t c, std::vector<CodePointChange>& out) {
  if (c == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE → i + COMBINING DOT ABOVE
    out.push_back({U'i', 0});
    out.push_back({0x307, 1});
    return;
  }
  const char32_t lower = c < 0x80 ? static_cast<char32_t>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c)
                                  : static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
  out.push_back({lower, 0});
}

}  // namespace

std::vector<SplitPiece> split_pieces(std::size_t size, std::span<const Range> matches, bool invert) {
  std::vector<SplitPiece> pieces;
  pieces.reserve(matches.size() * 2 + 1);
  std::size_t previous_end = 0;
  for (const Range& match : matches) {
    if (match.begin > previous_end) pieces.push_back({{previous_end, match.begin}, invert});
    pieces.push_back({match, !invert});
    previous_end = match.end;
  }
  if (previous_end < size) pieces.push_back({{previous_end, size}, invert});
  return pieces;
}

NormalizedString::NormalizedString(std::string_view utf8, std::size_t original_offset)
    : normalized_(utf8), original_{original_offset, original_offset + utf8.size()} {
  // Each byte is aligned to its code point's bytes; the text is valid UTF-8, so a lead byte gives the length.
  alignments_.reserve(utf8.size());
  std::size_t i = 0;
  while (i < utf8.size()) {
    const std::size_t length = utf8::sequence_length(static_cast<unsigned char>(utf8[i]));
    const Range alignment{original_offset + i, original_offset + i + length};
    for (std::size_t k = 0; k < length; ++k) alignments_.push_back(alignment);
    i += length;
  }
}

Range NormalizedString::original_range(Range normalized_range) const {
  const std::size_t end = std::min(normalized_range.end, alignments_.size());
  if (normalized_range.begin >= end) {
    const std::size_t at = normalized_range.begin;
    std::size_t position = original_.begin;
    if (at < alignments_.size()) {
      position = alignments_[at].begin;
    } else if (!alignments_.empty()) {
      position = alignments_.back().end;
    }
    return {position, position};
  }
  return {alignments_[normalized_range.begin].begin, alignments_[end - 1].end};
}

void NormalizedString::transform(Range range, std::span<const CodePointChange> changes, std::size_t initial_removed) {
  range.end = std::min(range.end, normalized_.size());
  range.begin = std::min(range.begin, range.end);
  // The old code points are read where they are: normalized_ changes only at the end.
  const auto old_length = [&](std::size_t at) {
    return utf8::sequence_length(static_cast<unsigned char>(normalized_[at]));
  };

  // Each code point replaced by one of as many bytes (a lowercase of ASCII, a control character made a space): the
  // bytes change in place and every byte keeps its alignment, which is what the general path below would build.
  const auto same_lengths = [&] {
    if (initial_removed != 0) return false;
    std::size_t at = range.begin;
    for (const CodePointChange& change : changes) {
      if (change.change != 0 || at >= range.end || utf8::encoded_length(change.code_point) != old_length(at))
        return false;
      at += old_length(at);
    }
    return at == range.end;
  };
  if (same_lengths()) {
    std::size_t at = range.begin;
    for (const CodePointChange& change : changes) at += utf8::write(change.code_point, normalized_.data() + at);
    return;
  }

  // `next_old` is the normalized byte of the next old code point, consumed front to back as `changes` says; an
  // inserted one takes the alignment of the byte before it, as tokenizers does.
  std::size_t next_old = range.begin;
  const auto consume_old = [&](std::size_t count) {
    for (; count > 0 && next_old < range.end; --count) next_old += old_length(next_old);
  };
  consume_old(initial_removed);
  // Built in buffers the thread keeps, so that once they have grown to its texts' size a transform allocates nothing.
  thread_local std::string new_bytes;
  thread_local std::vector<Range> new_alignments;
  new_bytes.clear();
  new_alignments.clear();
  for (const CodePointChange& change : changes) {
    Range alignment;
    if (change.change > 0) {
      alignment = next_old == 0 ? Range{original_.begin, original_.begin} : alignments_[next_old - 1];
    } else if (next_old < alignments_.size()) {
      alignment = alignments_[next_old];
    } else {
      alignment = alignments_.empty() ? Range{original_.begin, original_.begin} : alignments_.back();
    }
    if (change.change <= 0) consume_old(1);
    if (change.change < 0) consume_old(static_cast<std::size_t>(-static_cast<long long>(change.change)));

    char bytes[4];
    const std::size_t length = utf8::write(change.code_point, bytes);
    new_bytes.append(bytes, length);
    for (std::size_t k = 0; k < length; ++k) new_alignments.push_back(alignment);
  }

  normalized_.replace(range.begin, range.end - range.begin, new_bytes);
  const auto first = alignments_.begin() + static_cast<std::ptrdiff_t>(range.begin);
  const auto last = alignments_.begin() + static_cast<std::ptrdiff_t>(range.end);
  alignments_.insert(alignments_.erase(first, last), new_alignments.begin(), new_alignments.end());
}

void NormalizedString::prepend(std::string_view text) {
  if (normalized_.empty()) return;
  std::size_t first_end = 0;
  const char32_t first = utf8::decode(normalized_, first_end);
  // The first new code point stands for the old first one and the rest are inserted after it, so that all of
  // them take the first code point's alignment.
  std::vector<CodePointChange> changes;
  std::size_t i = 0;
  while (i < text.size()) changes.push_back({utf8::decode(text, i), changes.empty() ? 0 : 1});
  changes.push_back({first, 1});
  transform(Range{0, first_end}, changes, 0);
}

void NormalizedString::append(std::string_view text) {
  std::vector<CodePointChange> changes;
  std::size_t last_begin = normalized_.size();
  if (!normalized_.empty()) {
    last_begin = normalized_.size() - 1;
    while (last_begin > 0 && (static_cast<unsigned char>(normalized_[last_begin]) & 0xC0) == 0x80) --last_begin;
    std::size_t i = last_begin;
    changes.push_back({utf8::decode(normalized_, i), 0});
  }
  std::size_t i = 0;
  while (i < text.size()) changes.push_back({utf8::decode(text, i), 1});
  transform(Range{last_begin, normalized_.size()}, changes, 0);
}

void NormalizedString::lowercase() {
  // ASCII text (most of what an embedder reads) is lowered byte by byte in place: its alignments stay as they are.
  if (utf8::is_ascii(normalized_)) {
    for (char& byte : normalized_)
      if (byte >= 'A' && byte <= 'Z') byte = static_cast<char>(byte - 'A' + 'a');
    return;
  }
  std::vector<CodePointChange> changes;
  changes.reserve(normalized_.size());
  std::size_t i = 0;
  while (i < normalized_.size()) append_lowercase(utf8::decode(normalized_, i), changes);
  transform(changes, 0);
}

void NormalizedString::strip(bool left, bool right) {
  // Removing code points at the ends leaves the alignments of the others as they are.
  std::size_t begin = 0;
  std::size_t end = normalized_.size();
  if (left) {
    while (begin < end) {
      std::size_t next = begin;
      if (!utf8::is_white_space(utf8::decode(normalized_, next))) break;
      begin = next;
    }
  }
  if (right) {
    while (end > begin) {
      std::size_t last = end - 1;
      while (last > begin && (static_cast<unsigned char>(normalized_[last]) & 0xC0) == 0x80) --last;
      std::size_t next = last;
      if (!utf8::is_white_space(utf8::decode(normalized_, next))) break;
      end = last;
    }
  }
  if (begin == 0 && end == normalized_.size()) return;
  normalized_ = normalized_.substr(begin, end - begin);
  alignments_.erase(alignments_.begin() + static_cast<std::ptrdiff_t>(end), alignments_.end());
  alignments_.erase(alignments_.begin(), alignments_.begin() + static_cast<std::ptrdiff_t>(begin));
}

NormalizedString NormalizedString::slice(Range range) const {
  range.end = std::min(range.end, normalized_.size());
  range.begin = std::min(range.begin, range.end);
  NormalizedString part;
  part.normalized_ = normalized_.substr(range.begin, range.end - range.begin);
  part.alignments_.assign(alignments_.begin() + static_cast<std::ptrdiff_t>(range.begin),
                          alignments_.begin() + static_cast<std::ptrdiff_t>(range.end));
  part.original_ = original_range(range);
  return part;
}

std::vector<NormalizedString> NormalizedString::split(std::span<const Range> matches, SplitBehavior behavior) const {
  const std::vector<SplitPiece> pieces = split_pieces(normalized_.size(), matches, false);
  return split(std::span<const SplitPiece>(pieces), behavior);
}

std::vector<NormalizedString> NormalizedString::split(std::span<const SplitPiece> pieces,
                                                      SplitBehavior behavior) const {
  // The parts to keep, built as tokenizers folds its (range, matched) list for each behavior.
  std::vector<Range> parts;
  parts.reserve(pieces.size());
  bool previous_matched = false;
  switch (behavior) {
    case SplitBehavior::removed:
      for (const SplitPiece& piece : pieces) {
        if (!piece.matched) parts.push_back(piece.range);
      }
      break;
    case SplitBehavior::isolated:
      for (const SplitPiece& piece : pieces) parts.push_back(piece.range);
      break;
    case SplitBehavior::contiguous:
      for (const SplitPiece& piece : pieces) {
        if (piece.matched == previous_matched && !parts.empty()) {
          parts.back().end = piece.range.end;
        } else {
          parts.push_back(piece.range);
        }
        previous_matched = piece.matched;
      }
      break;
    case SplitBehavior::merged_with_previous:
      for (const SplitPiece& piece : pieces) {
        if (piece.matched && !previous_matched && !parts.empty()) {
          parts.back().end = piece.range.end;
        } else {
          parts.push_back(piece.range);
        }
        previous_matched = piece.matched;
      }
      break;
    case SplitBehavior::merged_with_next:
      for (auto piece = pieces.rbegin(); piece != pieces.rend(); ++piece) {
        if (piece->matched && !previous_matched && !parts.empty()) {
          parts.back().begin = piece->range.begin;
        } else {
          parts.push_back(piece->range);
        }
        previous_matched = piece->matched;
      }
      std::reverse(parts.begin(), parts.end());
      break;
  }

  std::vector<NormalizedString> out;
  out.reserve(parts.size());
  for (const Range& part : parts) {
    if (part.begin < part.end) out.push_back(slice(part));
  }
  return out;
}

}  // namespace accel::text

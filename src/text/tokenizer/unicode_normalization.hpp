// The Unicode normalization forms as tokenizers applies them to a NormalizedString (the NFC, NFD, NFKC and NFKD
// normalizers, and the accent stripping of BertNormalizer): the crate unicode-normalization-alignments tags each
// code point it produces with a change (NormalizedString::transform), and the alignments follow from those tags.
//
//   decomposition  a code point's first code point replaces it (0), the others are inserted (+1); canonical
//                  reordering then moves each tag along with its code point, so a +1 may come before a 0;
//   composition    a composed code point carries the sum of its two parts' changes less one (0 + +1 → 0).
//
// Decompositions, combining classes and compositions come from utf8proc (Unicode 15), the crate's tables from
// Unicode 9.0: the forms differ only on code points assigned since.
#pragma once

#include <cstdint>

#include "text/tokenizer/normalized_string.hpp"

namespace accel::text {

enum class UnicodeForm : std::uint8_t { nfc, nfd, nfkc, nfkd };

// Puts `text` in `form`.
void normalize_unicode(NormalizedString& text, UnicodeForm form);

}  // namespace accel::text

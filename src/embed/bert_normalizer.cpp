#include "embed/bert_normalizer.hpp"

#include <utf8proc.h>

#include <array>
#include <cstddef>

// Note [Unicode versions]
// `tokenizers` takes general categories (the Cc/Cf/Co it drops, the Mn it strips, the P* it splits at) from
// the unicode_categories crate, whose tables predate Unicode 9.0, and lowercase mappings and White_Space from
// the Rust standard library (Unicode 16). utf8proc 2.8 speaks Unicode 15.0 for all of them. The two disagree
// only on code points assigned or recategorised since Unicode 9.0, in scripts rarely met: marks of newer
// scripts (U+0898..U+089F, U+1ABF..U+1ACE, most of U+11xxx) that `tokenizers` keeps and we strip, newer
// format controls (U+0890, U+110CD, U+13430..U+1343F) that it keeps and we drop, newer punctuation (U+061D,
// U+2E43..U+2E5D) that it leaves inside words, U+1734 (Mn then, Mc now), U+166D (Po then, So now), and the
// case pairs of Unicode 16 (U+A7CB, U+10D50..U+10D65) that utf8proc does not know. Encoding each of the
// 1,112,064 code points (in three contexts) with all-MiniLM-L6-v2 and tokenizers 0.23.3, 568 get other ids.
// We follow utf8proc rather than carry a table of those differences; everything assigned by Unicode 8.0
// agrees.

namespace accel::embed {
namespace {

// The Unicode White_Space property, which `tokenizers` turns into ' ' (after dropping controls, so of the
// White_Space controls only \t \n \r are left to turn).
bool is_space_separator(utf8proc_category_t category) {
  return category == UTF8PROC_CATEGORY_ZS || category == UTF8PROC_CATEGORY_ZL || category == UTF8PROC_CATEGORY_ZP;
}

// `tokenizers` drops "other" code points but not unassigned ones (Cn), whatever its comment says; surrogates
// (Cs) cannot occur in valid UTF-8.
bool is_other(utf8proc_category_t category) {
  return category == UTF8PROC_CATEGORY_CC || category == UTF8PROC_CATEGORY_CF || category == UTF8PROC_CATEGORY_CO;
}

// The ranges are `tokenizers`' own definition of a Chinese character (the CJK Unified and Compatibility
// Ideographs blocks, as BERT defined them), not a Unicode property: its fifth range starts at U+2B920 where
// the original BERT code starts at U+2B820, and we follow `tokenizers`.
bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::int16_t combining_class(char32_t c) {
  return c < 0x300 ? 0 : utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class;
}

// The canonical ordering step of NFD: each run of code points with a nonzero combining class is sorted by
// class, stably. Runs are a few marks long, so an insertion sort is enough.
void canonical_order(std::vector<char32_t>& cps) {
  std::size_t i = 0;
  while (i < cps.size()) {
    if (combining_class(cps[i]) == 0) {
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (end < cps.size() && combining_class(cps[end]) != 0) ++end;
    for (std::size_t j = i + 1; j < end; ++j) {
      const char32_t c = cps[j];
      const std::int16_t cc = combining_class(c);
      std::size_t k = j;
      for (; k > i && combining_class(cps[k - 1]) > cc; --k) cps[k] = cps[k - 1];
      cps[k] = c;
    }
    i = end;
  }
}

}  // namespace

bool BertNormalizer::append_cleaned(char32_t c, std::vector<char32_t>& out) const {
  if (c < 0x80) {
    if (options_.clean_text) {
      if (c == '\t' || c == '\n' || c == '\r') {
        c = ' ';
      } else if (c < 0x20 || c == 0x7F) {
        return false;
      }
    }
    out.push_back(c);
    return false;
  }
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  if (options_.clean_text) {
    if (c == 0xFFFD || is_other(category)) return false;
    if (is_space_separator(category)) {
      out.push_back(' ');
      return false;
    }
  }
  const bool chinese = options_.handle_chinese_chars && is_chinese_char(c);
  if (chinese) out.push_back(' ');
  bool nonstarter = false;
  if (options_.strip_accents) {
    // A canonical decomposition is at most 4 code points long (Hangul syllables 3).
    std::array<utf8proc_int32_t, 8> decomposed{};
    const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), decomposed.data(), decomposed.size(),
                                           UTF8PROC_DECOMPOSE, nullptr);
    if (n > 0 && static_cast<std::size_t>(n) <= decomposed.size()) {
      for (utf8proc_ssize_t k = 0; k < n; ++k) {
        const auto d = static_cast<char32_t>(decomposed[static_cast<std::size_t>(k)]);
        nonstarter = nonstarter || combining_class(d) != 0;
        out.push_back(d);
      }
    } else {
      out.push_back(c);
    }
  } else {
    out.push_back(c);
  }
  if (chinese) out.push_back(' ');
  return nonstarter;
}

void BertNormalizer::normalize(std::string_view utf8, std::vector<char32_t>& out,
                               std::vector<char32_t>& scratch) const {
  const bool per_code_point_pass = options_.strip_accents || options_.lowercase;
  std::vector<char32_t>& cleaned = per_code_point_pass ? scratch : out;
  cleaned.clear();
  bool reorder = false;
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(utf8.data());
  const auto size = static_cast<utf8proc_ssize_t>(utf8.size());
  for (utf8proc_ssize_t i = 0; i < size;) {
    if (bytes[i] < 0x80) {
      append_cleaned(bytes[i], cleaned);
      ++i;
      continue;
    }
    utf8proc_int32_t c = 0;
    const utf8proc_ssize_t length = utf8proc_iterate(bytes + i, size - i, &c);
    if (length <= 0) return;  // unreachable: the caller validated the text
    reorder = append_cleaned(static_cast<char32_t>(c), cleaned) || reorder;
    i += length;
  }
  if (reorder) canonical_order(cleaned);
  if (!per_code_point_pass) return;

  out.clear();
  for (const char32_t c : cleaned) {
    if (c < 0x80) {
      out.push_back(options_.lowercase && c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
      continue;
    }
    if (options_.strip_accents && utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_MN) {
      continue;
    }
    if (!options_.lowercase) {
      out.push_back(c);
    } else if (c == 0x130) {
      // U+0130 (capital I with dot above) is the one code point whose full lowercase mapping, which Rust's
      // char::to_lowercase applies, is two code points; utf8proc_tolower gives the simple mapping only.
      out.push_back('i');
      out.push_back(0x307);
    } else {
      out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    }
  }
}

}  // namespace accel::embed

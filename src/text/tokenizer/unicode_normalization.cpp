#include "text/tokenizer/unicode_normalization.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

std::uint8_t combining_class(char32_t c) {
  if (c < 0x300) return 0;
  return static_cast<std::uint8_t>(utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class);
}

// The longest full decomposition is 18 code points (the compatibility decomposition of U+FDFA).
constexpr std::size_t kLongestDecomposition = 18;

void append_decomposition(char32_t c, bool compatibility, std::vector<CodePointChange>& out) {
  if (c < 0xA0) {  // nothing below U+00A0 decomposes, even for compatibility
    out.push_back({c, 0});
    return;
  }
  std::array<utf8proc_int32_t, kLongestDecomposition> parts{};
  const auto options =
      static_cast<utf8proc_option_t>(compatibility ? UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT : UTF8PROC_DECOMPOSE);
  const utf8proc_ssize_t count = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), parts.data(),
                                                         static_cast<utf8proc_ssize_t>(parts.size()), options, nullptr);
  if (count <= 0 || static_cast<std::size_t>(count) > parts.size()) {
    out.push_back({c, 0});
    return;
  }
  for (std::size_t k = 0; k < static_cast<std::size_t>(count); ++k) {
    out.push_back({static_cast<char32_t>(parts[k]), k == 0 ? 0 : 1});
  }
}

// Sorts each run of code points with a nonzero combining class by class, stably, their changes moving with them
// (the crate sorts (class, code point, change) triples).
void order_canonically(std::vector<CodePointChange>& cps) {
  const auto by_class = [](const CodePointChange& a, const CodePointChange& b) {
    return combining_class(a.code_point) < combining_class(b.code_point);
  };
  std::size_t i = 0;
  while (i < cps.size()) {
    if (combining_class(cps[i].code_point) == 0) {
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (end < cps.size() && combining_class(cps[end].code_point) != 0) ++end;
    if (end - i > 1) {
      std::stable_sort(cps.begin() + static_cast<std::ptrdiff_t>(i), cps.begin() + static_cast<std::ptrdiff_t>(end),
                       by_class);
    }
    i = end;
  }
}

// The primary composite of `starter` followed by `next` (Hangul syllables included, composition exclusions not).
std::optional<char32_t> composite(char32_t starter, char32_t next) {
  if (next < 0x300) return std::nullopt;  // the second part of every canonical decomposition is U+0300 or above
  // utf8proc 2.8 takes U+11A7, the base of the trailing jamo and not one of them, as a trailing jamo: it would
  // compose an LV syllable with it into the same syllable, dropping it.
  constexpr char32_t kHangulTrailingBase = 0x11A7;
  if (next == kHangulTrailingBase) return std::nullopt;
  std::array<utf8proc_int32_t, 2> pair{static_cast<utf8proc_int32_t>(starter), static_cast<utf8proc_int32_t>(next)};
  const auto options = static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE);
  if (utf8proc_normalize_utf32(pair.data(), 2, options) != 1) return std::nullopt;
  return static_cast<char32_t>(pair[0]);
}

// Canonical composition of decomposed code points, as the crate's Recompositions iterator does it, so that the
// changes of the parts combine as it combines them and the output keeps its order.
void compose(std::span<const CodePointChange> decomposed, std::vector<CodePointChange>& out) {
  std::optional<CodePointChange> starter;
  std::vector<CodePointChange> uncomposed;  // non-starters after `starter` that did not compose with it
  int last_class = -1;                      // the class of the last of those; -1 when there are none
  for (const CodePointChange& item : decomposed) {
    const int cls = combining_class(item.code_point);
    if (!starter) {
      if (cls != 0) {
        out.push_back(item);
      } else {
        starter = item;
      }
      continue;
    }
    if (last_class < cls) {  // not blocked from the starter
      if (const auto composed = composite(starter->code_point, item.code_point)) {
        starter = CodePointChange{*composed, starter->change + item.change - 1};
        continue;
      }
      if (cls == 0) {
        out.push_back(*starter);
        starter = item;
        continue;
      }
    } else if (cls == 0) {
      out.push_back(*starter);
      out.insert(out.end(), uncomposed.begin(), uncomposed.end());
      uncomposed.clear();
      last_class = -1;
      starter = item;
      continue;
    }
    uncomposed.push_back(item);
    last_class = cls;
  }
  if (starter) out.push_back(*starter);
  out.insert(out.end(), uncomposed.begin(), uncomposed.end());
}

bool unchanged(std::string_view utf8, std::span<const CodePointChange> changes) {
  std::size_t i = 0;
  for (const CodePointChange& item : changes) {
    if (item.change != 0 || i >= utf8.size() || utf8::decode(utf8, i) != item.code_point) return false;
  }
  return i == utf8.size();
}

}  // namespace

void normalize_unicode(NormalizedString& text, UnicodeForm form) {
  const std::string_view utf8 = text.normalized();
  // ASCII is its own form under all four.
  if (utf8::is_ascii(utf8)) return;
  const bool compatibility = form == UnicodeForm::nfkc || form == UnicodeForm::nfkd;
  std::vector<CodePointChange> decomposed;
  decomposed.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size();) append_decomposition(utf8::decode(utf8, i), compatibility, decomposed);
  order_canonically(decomposed);

  std::vector<CodePointChange> composed;
  const bool composes = form == UnicodeForm::nfc || form == UnicodeForm::nfkc;
  if (composes) {
    composed.reserve(decomposed.size());
    compose(decomposed, composed);
  }
  const std::vector<CodePointChange>& changes = composes ? composed : decomposed;
  if (unchanged(utf8, changes)) return;
  text.transform(changes, 0);
}

}  // namespace accel::text

#include "embed/bert_pre_tokenizer.hpp"

#include <utf8proc.h>

#include <array>

namespace accel::embed {

BertPreTokenizer::Kind BertPreTokenizer::classify_non_ascii(char32_t c) {
  // U+0085 is the one White_Space code point above ASCII that is not a separator (Zs, Zl, Zp).
  if (c == 0x85) return Kind::whitespace;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP: return Kind::whitespace;
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: return Kind::punctuation;
    default: return Kind::letter;
  }
}

void BertPreTokenizer::append_multibyte_utf8(char32_t c, std::string& out) {
  std::array<utf8proc_uint8_t, 4> bytes{};
  const auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), bytes.data());
  out.append(reinterpret_cast<const char*>(bytes.data()), static_cast<std::size_t>(n));
}

}  // namespace accel::embed

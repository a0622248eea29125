// accel::embed::BertNormalizer — the text clean-up a BERT tokenizer applies before splitting words, as
// HuggingFace `tokenizers` does it (normalizers::BertNormalizer), in the same order:
//
//   1. clean_text: drop U+0000, U+FFFD and "other" code points (Cc, Cf, Co; \t \n \r excepted), then map
//      whitespace (\t \n \r, Zs, Zl, Zp) to ' '.
//   2. handle_chinese_chars: put a space on each side of a CJK ideograph, so each becomes its own word.
//   3. strip_accents: NFD, then drop nonspacing marks (Mn).
//   4. lowercase: the full lowercase mapping of each code point on its own (no final-sigma context).
//
// Every Unicode property comes from utf8proc. See Note [Unicode versions] in bert_normalizer.cpp for where
// that makes a difference from `tokenizers`.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace accel::embed {

class BertNormalizer {
 public:
  struct Options {
    bool clean_text = true;
    bool handle_chinese_chars = true;
    bool strip_accents = true;
    bool lowercase = true;
  };

  explicit BertNormalizer(Options options) : options_(options) {}

  // The normalized code points of `utf8`, which the caller has validated as UTF-8. They replace the contents
  // of `out`; `scratch` is working space. Both are the caller's so that a thread reuses their capacity from
  // one text to the next instead of allocating per text.
  void normalize(std::string_view utf8, std::vector<char32_t>& out, std::vector<char32_t>& scratch) const;

  [[nodiscard]] const Options& options() const noexcept { return options_; }

 private:
  // Appends the code point after steps 1 to 3 (without dropping marks yet): its NFD decomposition when
  // accents are stripped. Returns whether any appended code point has a nonzero combining class.
  bool append_cleaned(char32_t c, std::vector<char32_t>& out) const;

  Options options_;
};

}  // namespace accel::embed

// The pre-tokenizers themselves (pre_tokenizers.cpp), made by make_pre_tokenizer (pre_tokenizer.cpp) once it has
// read and checked their fields. Each follows the tokenizers type of the same name.
#pragma once

#include <memory>

#include "text/tokenizer/components.hpp"
#include "text/tokenizer/pattern.hpp"

namespace accel::text {

enum class PrependScheme : std::uint8_t { always, first, never };

struct MetaspaceOptions {
  char32_t replacement = 0x2581;  // ▁
  PrependScheme prepend_scheme = PrependScheme::always;
  bool split = true;
};

struct ByteLevelOptions {
  bool add_prefix_space = true;
  bool use_regex = true;  // trim_offsets is the post-processor's business
};

std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer();
std::unique_ptr<PreTokenizer> make_whitespace();
std::unique_ptr<PreTokenizer> make_whitespace_split();
std::unique_ptr<PreTokenizer> make_punctuation(SplitBehavior behavior);
std::unique_ptr<PreTokenizer> make_digits(bool individual_digits);
std::unique_ptr<PreTokenizer> make_metaspace(const MetaspaceOptions& options);
std::unique_ptr<PreTokenizer> make_byte_level(const ByteLevelOptions& options);
std::unique_ptr<PreTokenizer> make_split(Pattern pattern, SplitBehavior behavior, bool invert);
std::unique_ptr<PreTokenizer> make_sequence(std::vector<std::unique_ptr<PreTokenizer>> steps);

}  // namespace accel::text

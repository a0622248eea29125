// text::Tokenizer::encode and encode_pair of arbitrary bytes with real tokenizers: all-MiniLM-L6-v2's (WordPiece;
// the text of an HTTP request reaches it unchanged), the test tokenizers qwen_bpe (byte-level BPE) and
// metaspace_unigram (Metaspace, Unigram with byte fallback), and multilingual-e5-small's XLM-R one (Precompiled,
// Unigram). Invalid UTF-8 must be refused, and so must a max_length that leaves no room beside the special tokens;
// anything else must give an encoding that satisfies encoding_invariants.hpp, whose tokens are those of the text
// encoded without a limit, cut to max_length on the side asked for.
//
// Input: one byte of options (bits 0-1: the tokenizer in the order above; bit 2: truncate on the left; bit 3: no
// special tokens; bit 6: a pair, the text cut in two at its middle), one byte giving max_length (0: no limit),
// then the text.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "accel/text/tokenizer.hpp"
#include "encoding_invariants.hpp"

namespace {

using namespace accel;
using fuzzing::violated;

struct RealTokenizer {
  text::Tokenizer tokenizer;
  std::size_t single_special_tokens;  // how many the post-processor adds to one text
  std::size_t pair_special_tokens;
};

RealTokenizer load(const char* path) {
  auto tokenizer = text::Tokenizer::load(path);
  if (!tokenizer.ok()) violated("a real tokenizer does not load");
  // The empty texts have no tokens of their own: what they encode to is the special tokens alone.
  auto single = tokenizer->encode("");
  auto pair = tokenizer->encode_pair("", "");
  if (!single.ok() || !pair.ok()) violated("a real tokenizer refuses the empty text");
  for (const auto* encoding : {&*single, &*pair}) {
    if (std::count(encoding->special_tokens_mask.begin(), encoding->special_tokens_mask.end(), 0) != 0) {
      violated("the empty text has tokens that are not special");
    }
  }
  return {*tokenizer, single->ids.size(), pair->ids.size()};
}

// Loaded by LLVMFuzzerInitialize: XLM-R's 250,002 pieces take seconds under the sanitizers, which must not count
// against the first input's timeout.
const std::vector<RealTokenizer>* real_tokenizers = nullptr;

// The ids the model gave (not the post-processor's), in order.
std::vector<std::int32_t> model_ids(const text::Encoding& encoding) {
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < encoding.ids.size(); ++i) {
    if (encoding.special_tokens_mask[i] == 0) ids.push_back(encoding.ids[i]);
  }
  return ids;
}

std::size_t model_token_count(const text::Tokenizer& tokenizer, std::string_view text) {
  auto encoded = tokenizer.encode(text, {.add_special_tokens = false});
  if (!encoded.ok()) violated("a valid text without max_length was refused");
  return encoded->ids.size();
}

void encode_single(const RealTokenizer& real, std::string_view text, const text::EncodeOptions& options) {
  const std::size_t special = options.add_special_tokens ? real.single_special_tokens : 0;
  const bool room = options.max_length == 0 || options.max_length > special;
  auto encoded = real.tokenizer.encode(text, options);
  if (!encoded.ok()) {
    if (fuzzing::valid_utf8(text) && room) violated("a valid text was refused");
    return;
  }
  if (!fuzzing::valid_utf8(text)) violated("invalid UTF-8 was encoded");
  if (!room) violated("a max_length without room for a token was accepted");
  fuzzing::check_encoding(real.tokenizer, *encoded, text, nullptr, options.max_length, true);
  if (options.max_length == 0) return;

  auto whole = real.tokenizer.encode(text, {.add_special_tokens = options.add_special_tokens});
  if (!whole.ok()) violated("a valid text without max_length was refused");
  const std::vector<std::int32_t> all = model_ids(*whole);
  const std::size_t budget = options.max_length - special;
  const std::size_t kept = std::min(all.size(), budget);
  const auto first = options.side == text::TruncationSide::right ? all.begin() : all.end() - kept;
  if (model_ids(*encoded) != std::vector<std::int32_t>(first, first + kept)) {
    violated("truncation kept other ids than the text's first or last max_length");
  }
  if (encoded->truncated != (all.size() > budget)) violated("truncated does not say whether ids were dropped");
}

void encode_pair(const RealTokenizer& real, std::string_view first, std::string_view second,
                 const text::EncodeOptions& options) {
  const std::size_t special = options.add_special_tokens ? real.pair_special_tokens : 0;
  const bool room = options.max_length == 0 || options.max_length > special;
  const bool valid = fuzzing::valid_utf8(first) && fuzzing::valid_utf8(second);
  auto encoded = real.tokenizer.encode_pair(first, second, options);
  if (!encoded.ok()) {
    if (valid && room) violated("a valid pair was refused");
    return;
  }
  if (!valid) violated("invalid UTF-8 was encoded");
  if (!room) violated("a max_length without room for a token was accepted");
  fuzzing::check_encoding(real.tokenizer, *encoded, first, &second, options.max_length, true);

  const std::size_t total = model_token_count(real.tokenizer, first) + model_token_count(real.tokenizer, second);
  const std::size_t budget = options.max_length == 0 ? total : options.max_length - special;
  if (model_ids(*encoded).size() != std::min(total, budget)) violated("a pair was cut to other than max_length");
  if (encoded->truncated != (total > budget)) violated("truncated does not say whether ids were dropped");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  real_tokenizers = new const std::vector<RealTokenizer>{
      load(ACCEL_FUZZ_MINILM_TOKENIZER_JSON), load(ACCEL_FUZZ_QWEN_BPE_TOKENIZER_JSON),
      load(ACCEL_FUZZ_METASPACE_UNIGRAM_TOKENIZER_JSON), load(ACCEL_FUZZ_XLMR_TOKENIZER_JSON)};
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t choice = data[0];
  const RealTokenizer& real = (*real_tokenizers)[choice & 3];
  const text::EncodeOptions options{
      .add_special_tokens = (choice & 8) == 0,
      .max_length = data[1],
      .side = (choice & 4) != 0 ? text::TruncationSide::left : text::TruncationSide::right};
  const std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);
  if ((choice & 0x40) == 0) {
    encode_single(real, input, options);
    return 0;
  }
  std::size_t middle = input.size() / 2;
  while (middle > 0 && (static_cast<unsigned char>(input[middle]) & 0xC0) == 0x80) --middle;
  encode_pair(real, input.substr(0, middle), input.substr(middle), options);
  return 0;
}

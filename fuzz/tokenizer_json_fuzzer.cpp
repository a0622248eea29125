// text::Tokenizer::from_json: any tokenizer.json. A tokenizer that loads also encodes a fixed text (added tokens of
// the seeds' tokenizers, combining marks, CJK, compatibility characters, whitespace runs, an emoji) alone, with
// truncation on the right and without special tokens, and as a pair truncated on the left; every encoding must
// satisfy the invariants of encoding_invariants.hpp. Without special tokens nothing may refuse a valid text. The
// full encoding's ids are decoded again, with and without special tokens (through the file's "decoder"): a decode
// that is not refused is valid UTF-8.
//
// fuzz/make_text_corpus.py writes seeds of every component type whose vocabularies keep the pieces of these
// texts; keep FIXED_TEXT and FIXED_PAIR there equal to kText and kPair.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "accel/text/tokenizer.hpp"
#include "encoding_invariants.hpp"

namespace {

using namespace std::string_view_literals;

constexpr std::string_view kText =
    " Hello, world! He\u0301llo w\u00f6rld \u4f60\u597d na\u00efve caf\u00e9 \ufb01 \u2460 \uff76\uff9e x\u00b2 "
    "[CLS] <s> <|endoftext|> [MASK] unaffable 2024 \u00a0 \t\n\U0001f642 "sv;
constexpr std::string_view kPair = "The tokenizer's second text: 12345 \u2581 a\u00f1b"sv;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel;
  auto tokenizer = text::Tokenizer::from_json(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!tokenizer.ok()) return 0;

  const text::EncodeOptions full{};
  auto encoded = tokenizer->encode(kText, full);
  if (!encoded.ok()) fuzzing::violated("a valid text without max_length was refused");
  fuzzing::check_encoding(*tokenizer, *encoded, kText, nullptr, 0, false);
  for (const bool skip_special_tokens : {true, false}) {
    auto decoded = tokenizer->decode(encoded->ids, skip_special_tokens);
    if (decoded.ok() && !fuzzing::valid_utf8(*decoded)) fuzzing::violated("a decoded text that is not UTF-8");
  }

  // A file's post-processor may add more special tokens than max_length leaves room for: then it is refused.
  const text::EncodeOptions right{.max_length = 8};
  if (auto truncated = tokenizer->encode(kText, right); truncated.ok()) {
    fuzzing::check_encoding(*tokenizer, *truncated, kText, nullptr, right.max_length, false);
  }
  const text::EncodeOptions plain{.add_special_tokens = false, .max_length = 5};
  auto bare = tokenizer->encode(kText, plain);
  if (!bare.ok()) fuzzing::violated("a valid text without special tokens was refused");
  fuzzing::check_encoding(*tokenizer, *bare, kText, nullptr, plain.max_length, false);

  const text::EncodeOptions left{.max_length = 12, .side = text::TruncationSide::left};
  if (auto pair = tokenizer->encode_pair(kText, kPair, left); pair.ok()) {
    fuzzing::check_encoding(*tokenizer, *pair, kText, &kPair, left.max_length, false);
  }
  return 0;
}

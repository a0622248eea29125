// embed::WordPieceTokenizer::encode of arbitrary bytes with all-MiniLM-L6-v2's real tokenizer (the text of an
// HTTP request reaches it unchanged): invalid UTF-8 is an error, anything else a list of ids in the vocabulary.
//
// Input: one byte giving max_length (at least 2, as the server never asks for less), then the text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "embed/wordpiece_tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel::embed;
  static const WordPieceTokenizer tokenizer = [] {
    auto loaded = WordPieceTokenizer::load(ACCEL_FUZZ_TOKENIZER_JSON);
    if (!loaded.ok()) std::abort();
    return std::move(*loaded);
  }();
  constexpr std::int32_t kVocabulary = 30522;
  if (size < 1) return 0;
  const std::size_t max_length = 2 + data[0];
  auto encoded = tokenizer.encode(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), max_length);
  if (!encoded.ok()) return 0;
  if (encoded->ids.size() > max_length) std::abort();
  for (std::int32_t id : encoded->ids) {
    if (id < 0 || id >= kVocabulary) std::abort();
  }
  return 0;
}

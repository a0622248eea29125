// embed::WordPieceTokenizer::from_json: a model's tokenizer.json. A tokenizer that loads also encodes a fixed
// text with added tokens, accents, Chinese characters and a word longer than WordPiece splits.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "embed/wordpiece_tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel::embed;
  auto tokenizer = WordPieceTokenizer::from_json(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!tokenizer.ok()) return 0;
  (void)tokenizer->encode("[CLS] Héllo, wörld! 你好 [MASK] unaffable antidisestablishmentarianism [SEP]", 64);
  return 0;
}

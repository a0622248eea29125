// How an embedding row is written into a response, by the request's `encoding_format`: one codec for every route
// that answers dense rows.
//
//   float    [0.0123, -0.5, ...]                  each float in its shortest form that reads back the same
//   base64   "AACAPw..."                         OpenAI's: the base64 of the row's little-endian float32 bytes
//   uint8    [0..255, ...]                       one per dimension
//   int8     [-128..127, ...]                    one per dimension
//   ubinary  [0..255, ...]                       the signs packed, ceil(dimensions / 8) bytes
//   binary   [-128..127, ...]                    ubinary's bytes minus 128
//
// As sentence-transformers' quantize_embeddings defines them (Cohere's and vLLM's names): binary and ubinary pack
// `value > 0` as numpy.packbits does, the first dimension in the most significant bit of the first byte, the last
// byte's unused low bits zero. uint8 and int8 are quantize_embeddings with the fixed range [-1, 1] on every
// dimension (its `ranges` argument; a server cannot calibrate on each batch, which would make a row's bytes depend
// on its neighbours), the range of a unit-length row's components: with step = 2 / 255,
//   uint8 = trunc((value + 1) / step),  int8 = trunc((value + 1) / step - 128)
// (trunc toward zero, as numpy's astype does; so int8 is not always uint8 - 128), computed in double; a value
// outside [-1, 1] (a model whose rows are not unit length, asked not to normalise) is clamped to the type's range.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "serve/embed_request.hpp"

namespace accel::serve {

// The encoding of an `encoding_format` name; nothing for a name not above.
[[nodiscard]] std::optional<Encoding> encoding_named(std::string_view name);
// The names above, for an error message.
inline constexpr std::string_view kEncodingNames = R"("float", "base64", "int8", "uint8", "binary" or "ubinary")";

// The integers a quantised encoding (int8, uint8, binary, ubinary) writes for `row`.
[[nodiscard]] std::vector<std::int16_t> quantize_row(std::span<const float> row, Encoding encoding);

// `row` as a JSON value in `encoding`.
void append_encoded_row(std::string& out, std::span<const float> row, Encoding encoding);

}  // namespace accel::serve

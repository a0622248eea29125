// text-embeddings-inference's token routes' bodies: POST /decode and /embed_all, in the shapes of TEI's OpenAPI
// document.
//
// /decode: `ids`, one sequence of token ids ([1, 2]) or several ([[1, 2], [3]]), each id an integer from 0 to
// 2^32-1, at most max_inputs sequences (413); `skip_special_tokens` (default true). The answer is an array of
// strings, one per sequence (one for a single sequence too), as the model's tokenizer decodes them: ids outside the
// vocabulary are left out, as `tokenizers` does.
//
// /embed_all: `inputs` (a string or an array of strings), `truncate`, `truncation_direction`, `prompt_name`, as
// /embed takes them; `normalize` and `dimensions` are refused (token vectors are neither scaled nor cut). The answer
// is, per input, its tokens' vectors (the encoder's last hidden states, special tokens included): [[[f32]]].
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "accel/embed/model.hpp"
#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"

namespace accel::serve {

struct DecodeRequest {
  std::vector<std::vector<std::int32_t>> sequences;
  bool skip_special_tokens = true;
};
[[nodiscard]] ApiResult<DecodeRequest> parse_tei_decode_request(std::string_view body, const RequestLimits& limits);
// ["text", ...]
[[nodiscard]] std::string tei_decode_response(const std::vector<std::string>& texts);

// The texts and their TextOptions; nothing else of EmbedRequest is set.
[[nodiscard]] ApiResult<EmbedRequest> parse_tei_embed_all_request(std::string_view body, const RequestLimits& limits);
// `vectors` as Model::embed_token_vectors gives them: per sequence, its rows.
[[nodiscard]] std::string tei_embed_all_response(const embed::Embeddings& vectors);

}  // namespace accel::serve

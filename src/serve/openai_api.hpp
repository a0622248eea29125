// OpenAI's embeddings API (POST /v1/embeddings): its request body parsed into an EmbedRequest, and its response.
//
// `input` is a string, an array of strings, an array of token arrays or one token array; token ids are the
// model's own vocabulary's (used as given, no special tokens added). An input longer than the model's maximum
// is refused (413), as OpenAI does, unless the server auto-truncates or the request says `truncate: true`.
// `dimensions` (1 to the model's) keeps the first dimensions of each embedding and normalises them again when the
// model's embeddings are unit length (Matryoshka); larger is 400. Beyond OpenAI's fields, `truncate`,
// `truncation_direction` and `prompt_name` are read as TEI reads them. `encoding_format` is float (the default),
// base64, or one of the quantised encodings of embedding_codec.hpp (int8, uint8, binary, ubinary: arrays of
// integers). `user` is accepted and ignored.
#pragma once

#include <string>
#include <string_view>

#include "accel/embed/model.hpp"
#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"

namespace accel::serve {

[[nodiscard]] ApiResult<EmbedRequest> parse_openai_request(std::string_view body, const RequestLimits& limits);

// {"object":"list","data":[{"object":"embedding","index":i,"embedding":[...], "base64" or [integers...]}],"model",
//  "usage":{"prompt_tokens","total_tokens"}}.
[[nodiscard]] std::string openai_response(const embed::Embeddings& embeddings, const EmbedRequest& request);

}  // namespace accel::serve

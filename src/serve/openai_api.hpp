// OpenAI's embeddings API (POST /v1/embeddings): its request body parsed into an EmbedRequest, and its response.
//
// `input` is a string, an array of strings, an array of token arrays or one token array; token ids are the
// model's own vocabulary's (used as given, no special tokens added). An input longer than the model's maximum
// is refused, as OpenAI does. `dimensions` is accepted only when it is the model's (the model has no shortened
// embeddings). `user` is accepted and ignored.
#pragma once

#include <string>
#include <string_view>

#include "accel/embed/model.hpp"
#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"

namespace accel::serve {

[[nodiscard]] ApiResult<EmbedRequest> parse_openai_request(std::string_view body, const RequestLimits& limits);

// {"object":"list","data":[{"object":"embedding","index":i,"embedding":[...] or "base64"}],"model",
//  "usage":{"prompt_tokens","total_tokens"}}.
[[nodiscard]] std::string openai_response(const embed::Embeddings& embeddings, const EmbedRequest& request);

}  // namespace accel::serve

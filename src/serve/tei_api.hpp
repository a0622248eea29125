// text-embeddings-inference's embed API (POST /embed): its request body parsed into an EmbedRequest, and its
// response, an array of embeddings.
//
// `inputs` is a string or an array of strings. `truncate` (default false) cuts inputs longer than the model's
// maximum instead of refusing them (413, as TEI does). `normalize` must stay true: the model's pooling ends
// in an L2 normalisation, so an unnormalised embedding is not there to return, and it is refused (400) rather
// than answered with a normalised one that claims otherwise. `prompt_name` is not supported (400).
#pragma once

#include <string>
#include <string_view>

#include "accel/embed/model.hpp"
#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"

namespace accel::serve {

[[nodiscard]] ApiResult<EmbedRequest> parse_tei_request(std::string_view body, const RequestLimits& limits);

[[nodiscard]] std::string tei_response(const embed::Embeddings& embeddings);

}  // namespace accel::serve

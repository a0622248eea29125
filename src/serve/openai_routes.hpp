// OpenAI's routes, as entries of the server's table, with their errors in OpenAI's shape: POST /v1/embeddings (dense
// models) and POST /v1/rerank in the shape Cohere's and Jina's clients send (cross-encoders).
#pragma once

#include <vector>

#include "serve/endpoint.hpp"

namespace accel::serve {

[[nodiscard]] std::vector<Endpoint> openai_endpoints();

}  // namespace accel::serve

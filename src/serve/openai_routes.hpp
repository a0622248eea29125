// OpenAI's routes, as entries of the server's table, with their errors in OpenAI's shape: POST /v1/embeddings (dense
// models), POST /v1/rerank in the shape Cohere's and Jina's clients send (cross-encoders), and GET /v1/models (the
// names a request may give as "model").
#pragma once

#include <vector>

#include "serve/endpoint.hpp"

namespace accel::serve {

[[nodiscard]] std::vector<Endpoint> openai_endpoints();

}  // namespace accel::serve

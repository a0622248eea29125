// OpenAI's routes, as entries of the server's table: POST /v1/embeddings (dense models).
#pragma once

#include <vector>

#include "serve/endpoint.hpp"

namespace accel::serve {

[[nodiscard]] std::vector<Endpoint> openai_endpoints();

}  // namespace accel::serve

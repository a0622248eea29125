// text-embeddings-inference's routes, as entries of the server's table: POST /embed (dense models),
// /embed_sparse (SPLADE), /rerank (a cross-encoder of one label), /predict (any cross-encoder), /tokenize (any
// model), GET /info; and (tei_token_routes.cpp) POST /decode, /embed_all (any model). A route the model's head does
// not fit answers 424 (TEI's Backend error) saying why.
#pragma once

#include <vector>

#include "serve/endpoint.hpp"

namespace accel::serve {

[[nodiscard]] std::vector<Endpoint> tei_endpoints();
// POST /decode and /embed_all (tei_token_routes.cpp): any model.
[[nodiscard]] std::vector<Endpoint> tei_token_endpoints();

}  // namespace accel::serve

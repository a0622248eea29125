// POST /v1/rerank in the shape Cohere's and Jina's clients send:
//   {"model": "...", "query": "...", "documents": ["text" | {"text": "..."}, ...], "top_n": N,
//    "return_documents": false, "truncate", "truncation_direction"}
//   -> {"model": "...", "results": [{"index", "relevance_score", "document": {"text"}?}, ...],
//       "usage": {"total_tokens"}}
// results best first, the first top_n of them (absent or null: all); relevance_score is the sigmoid of the
// cross-encoder's logit, as TEI's /rerank answers without raw_scores. return_documents defaults to false, as
// Cohere's does (Jina's clients send it when they want the texts). `model` is echoed; the server's model when absent.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accel/embed/model.hpp"
#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"

namespace accel::serve {

struct CohereRerankRequest {
  std::string model;
  std::string query;
  std::vector<std::string> documents;
  std::size_t top_n = 0;  // 0: every document
  bool return_documents = false;
  TextOptions text;
};
[[nodiscard]] ApiResult<CohereRerankRequest> parse_cohere_rerank_request(std::string_view body,
                                                                         const RequestLimits& limits);
// `logits`: the model's one logit per document, in the request's order, with the tokens each pair ran.
[[nodiscard]] std::string cohere_rerank_response(const embed::Embeddings& logits, const CohereRerankRequest& request);

}  // namespace accel::serve

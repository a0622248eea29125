// text-embeddings-inference's POST /similarity, in the shape of TEI's OpenAPI document:
//   {"inputs": {"source_sentence": "...", "sentences": ["...", ...]},
//    "parameters": {"truncate", "truncation_direction", "prompt_name"}}  (parameters optional, may be null)
//   -> [cosine similarity of the source sentence's embedding with each sentence's, in the request's order]
// The source sentence and the sentences count together against the server's max_inputs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "accel/embed/model.hpp"
#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"

namespace accel::serve {

struct SimilarityRequest {
  std::string source_sentence;
  std::vector<std::string> sentences;
  TextOptions text;
};
[[nodiscard]] ApiResult<SimilarityRequest> parse_tei_similarity_request(std::string_view body,
                                                                        const RequestLimits& limits);

// Cosine similarity of row 0 of `rows` with each later row; a zero row's similarity is 0.
[[nodiscard]] std::vector<float> cosine_to_first(const embed::Embeddings& rows);
// [score, ...]
[[nodiscard]] std::string tei_similarity_response(const std::vector<float>& scores);

}  // namespace accel::serve

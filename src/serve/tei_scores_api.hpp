// text-embeddings-inference's request bodies and responses for its cross-encoder routes, in the shapes of TEI's
// OpenAPI document:
//   POST /rerank  {"query", "texts", "raw_scores": false, "return_text": false, "truncate", "truncation_direction"}
//                 -> [{"index", "score", "text"?}], best first; the score is the sigmoid of the model's one logit
//                 unless raw_scores.
//   POST /predict {"inputs": "text" | ["first", "second"] | [[...], ...], "raw_scores": false, "truncate",
//                 "truncation_direction"} -> [{"score", "label"}] (best first) for one input, an array of those
//                 for a batch; scores are the softmax of the logits (the sigmoid for one label) unless raw_scores.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/embed/model.hpp"
#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"

namespace accel::serve {

// A relevance logit as a probability.
[[nodiscard]] float sigmoid(float logit);
// Indices of `scores`, highest score first (ties in input order): the order every rerank response lists.
[[nodiscard]] std::vector<std::size_t> best_first(std::span<const float> scores);

struct RerankRequest {
  std::string query;
  std::vector<std::string> texts;
  bool raw_scores = false;
  bool return_text = false;
  TextOptions text;
};
[[nodiscard]] ApiResult<RerankRequest> parse_tei_rerank_request(std::string_view body, const RequestLimits& limits);
// `scores`: the model's one logit per text, in the request's order.
[[nodiscard]] std::string tei_rerank_response(std::span<const float> scores, const RerankRequest& request);

// One input of /predict: a text, or a pair of texts the model reads together.
struct PredictInput {
  std::string first;
  std::optional<std::string> second;
};
struct PredictRequest {
  std::vector<PredictInput> inputs;
  bool batch = false;  // `inputs` was an array of inputs: the response is an array of answers
  bool raw_scores = false;
  TextOptions text;
};
[[nodiscard]] ApiResult<PredictRequest> parse_tei_predict_request(std::string_view body, const RequestLimits& limits);
[[nodiscard]] std::string tei_predict_response(const embed::Embeddings& logits, const std::vector<std::string>& labels,
                                               const PredictRequest& request);

}  // namespace accel::serve

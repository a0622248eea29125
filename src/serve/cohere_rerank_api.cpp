#include "serve/cohere_rerank_api.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <numeric>

#include "serve/json_body.hpp"
#include "serve/tei_scores_api.hpp"
#include "serve/text_options_json.hpp"

namespace accel::serve {

using nlohmann::json;

ApiResult<CohereRerankRequest> parse_cohere_rerank_request(std::string_view body, const RequestLimits& limits) {
  ApiResult<json> parsed = parse_json_object(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return *error;
  const json& doc = std::get<json>(parsed);
  CohereRerankRequest request;
  if (auto error = read_text_options(doc, request.text)) return std::move(*error);
  if (request.text.prompt_name)
    return ApiError{400, "'prompt_name' is not taken by /v1/rerank", "prompt_name", "not_supported"};
  if (auto error = read_flag(doc, "return_documents", request.return_documents)) return std::move(*error);
  if (auto model = doc.find("model"); model != doc.end() && !model->is_null()) {
    if (!model->is_string()) return bad_type("model", "a string");
    request.model = model->get<std::string>();
  }
  if (auto top_n = doc.find("top_n"); top_n != doc.end() && !top_n->is_null()) {
    if (!top_n->is_number_integer()) return bad_type("top_n", "an integer");
    const auto wanted = top_n->get<std::int64_t>();
    if (wanted < 1)
      return ApiError{400, fmt::format("'top_n' is {}; it must be at least 1", wanted), "top_n", "invalid_value"};
    request.top_n = static_cast<std::size_t>(wanted);
  }
  auto query = doc.find("query");
  if (query == doc.end()) return ApiError{400, "'query' is required", "query", "missing_field"};
  if (!query->is_string()) return bad_type("query", "a string");
  request.query = query->get<std::string>();
  auto documents = doc.find("documents");
  if (documents == doc.end()) return ApiError{400, "'documents' is required", "documents", "missing_field"};
  if (!documents->is_array()) return bad_type("documents", "an array of strings or of {\"text\": string}");
  if (documents->empty()) return ApiError{400, "'documents' is an empty array", "documents", "empty_input"};
  if (documents->size() > limits.max_inputs)
    return ApiError{
        413,
        fmt::format("'documents' has {} documents, more than max_inputs ({})", documents->size(), limits.max_inputs),
        "documents", "too_many_inputs"};
  for (std::size_t i = 0; i < documents->size(); ++i) {
    const json& document = (*documents)[i];
    const std::string field = fmt::format("documents[{}]", i);
    if (document.is_string()) {
      request.documents.push_back(document.get<std::string>());
      continue;
    }
    if (!document.is_object()) return bad_type(field, "a string or {\"text\": string}");
    auto text = document.find("text");
    if (text == document.end() || !text->is_string()) return bad_type(field + ".text", "a string");
    request.documents.push_back(text->get<std::string>());
  }
  return request;
}

std::string cohere_rerank_response(const embed::Embeddings& logits, const CohereRerankRequest& request) {
  std::vector<float> scores(logits.values.begin(), logits.values.end());
  for (float& score : scores) score = sigmoid(score);
  std::vector<std::size_t> order = best_first(scores);
  if (request.top_n != 0 && request.top_n < order.size()) order.resize(request.top_n);
  json results = json::array();
  for (std::size_t index : order) {
    json result = {{"index", index}, {"relevance_score", scores[index]}};
    if (request.return_documents) result["document"] = {{"text", request.documents[index]}};
    results.push_back(std::move(result));
  }
  const std::uint64_t tokens = std::accumulate(logits.tokens.begin(), logits.tokens.end(), std::uint64_t{0});
  const json out = {{"model", request.model}, {"results", results}, {"usage", {{"total_tokens", tokens}}}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace accel::serve

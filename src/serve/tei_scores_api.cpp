#include "serve/tei_scores_api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "serve/json_body.hpp"
#include "serve/text_options_json.hpp"

namespace accel::serve {
namespace {

using nlohmann::json;

ApiError too_many(std::string_view field, std::size_t count, std::size_t limit) {
  return {413, fmt::format("'{}' has {} inputs, more than max_inputs ({})", field, count, limit), std::string(field),
          "too_many_inputs"};
}

// One /predict input: a string, or an array of one or two strings.
ApiResult<PredictInput> read_predict_input(const json& value, const std::string& field) {
  if (value.is_string()) return PredictInput{value.get<std::string>(), std::nullopt};
  if (!value.is_array() || value.empty() || value.size() > 2)
    return bad_type(field, "a string or an array of one or two strings");
  for (std::size_t i = 0; i < value.size(); ++i)
    if (!value[i].is_string()) return bad_type(fmt::format("{}[{}]", field, i), "a string");
  PredictInput input{value[0].get<std::string>(), std::nullopt};
  if (value.size() == 2) input.second = value[1].get<std::string>();
  return input;
}

}  // namespace

float sigmoid(float logit) { return 1.0f / (1.0f + std::exp(-logit)); }

std::vector<std::size_t> best_first(std::span<const float> scores) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::ranges::stable_sort(order, [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  return order;
}

ApiResult<RerankRequest> parse_tei_rerank_request(std::string_view body, const RequestLimits& limits) {
  ApiResult<json> parsed = parse_json_object(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return *error;
  const json& doc = std::get<json>(parsed);
  RerankRequest request;
  if (auto error = read_text_options(doc, request.text)) return std::move(*error);
  if (request.text.prompt_name)
    return ApiError{400, "'prompt_name' is not taken by /rerank", "prompt_name", "not_supported"};
  if (auto error = read_flag(doc, "raw_scores", request.raw_scores)) return std::move(*error);
  if (auto error = read_flag(doc, "return_text", request.return_text)) return std::move(*error);
  auto query = doc.find("query");
  if (query == doc.end()) return ApiError{400, "'query' is required", "query", "missing_field"};
  if (!query->is_string()) return bad_type("query", "a string");
  request.query = query->get<std::string>();
  auto texts = doc.find("texts");
  if (texts == doc.end()) return ApiError{400, "'texts' is required", "texts", "missing_field"};
  if (!texts->is_array()) return bad_type("texts", "an array of strings");
  if (texts->empty()) return ApiError{400, "'texts' is an empty array", "texts", "empty_input"};
  if (texts->size() > limits.max_inputs) return too_many("texts", texts->size(), limits.max_inputs);
  for (std::size_t i = 0; i < texts->size(); ++i) {
    if (!(*texts)[i].is_string()) return bad_type(fmt::format("texts[{}]", i), "a string");
    request.texts.push_back((*texts)[i].get<std::string>());
  }
  return request;
}

std::string tei_rerank_response(std::span<const float> scores, const RerankRequest& request) {
  std::vector<float> answered(scores.begin(), scores.end());
  if (!request.raw_scores) std::ranges::transform(answered, answered.begin(), sigmoid);
  json out = json::array();
  for (std::size_t index : best_first(answered)) {
    json rank = {{"index", index}, {"score", answered[index]}};
    if (request.return_text) rank["text"] = request.texts[index];
    out.push_back(std::move(rank));
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

ApiResult<PredictRequest> parse_tei_predict_request(std::string_view body, const RequestLimits& limits) {
  ApiResult<json> parsed = parse_json_object(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return *error;
  const json& doc = std::get<json>(parsed);
  PredictRequest request;
  if (auto error = read_text_options(doc, request.text)) return std::move(*error);
  if (request.text.prompt_name)
    return ApiError{400, "'prompt_name' is not taken by /predict", "prompt_name", "not_supported"};
  if (auto error = read_flag(doc, "raw_scores", request.raw_scores)) return std::move(*error);
  auto inputs = doc.find("inputs");
  if (inputs == doc.end()) return ApiError{400, "'inputs' is required", "inputs", "missing_field"};
  // As TEI reads it: a string or an array of strings is one input (a text, or a pair); an array of those, a batch.
  const bool batch = inputs->is_array() && !inputs->empty() && !(*inputs)[0].is_string();
  if (!batch) {
    ApiResult<PredictInput> one = read_predict_input(*inputs, "inputs");
    if (auto* error = std::get_if<ApiError>(&one)) return std::move(*error);
    request.inputs.push_back(std::move(std::get<0>(one)));
    return request;
  }
  if (inputs->size() > limits.max_inputs) return too_many("inputs", inputs->size(), limits.max_inputs);
  request.batch = true;
  for (std::size_t i = 0; i < inputs->size(); ++i) {
    ApiResult<PredictInput> one = read_predict_input((*inputs)[i], fmt::format("inputs[{}]", i));
    if (auto* error = std::get_if<ApiError>(&one)) return std::move(*error);
    request.inputs.push_back(std::move(std::get<0>(one)));
  }
  return request;
}

std::string tei_predict_response(const embed::Embeddings& logits, const std::vector<std::string>& labels,
                                 const PredictRequest& request) {
  json out = json::array();
  for (std::size_t i = 0; i < logits.count(); ++i) {
    std::vector<float> scores(logits.row(i).begin(), logits.row(i).end());
    if (!request.raw_scores && scores.size() == 1) {
      scores[0] = sigmoid(scores[0]);
    } else if (!request.raw_scores) {
      const float top = *std::ranges::max_element(scores);
      float sum = 0;
      for (float& score : scores) sum += score = std::exp(score - top);
      for (float& score : scores) score /= sum;
    }
    json answer = json::array();
    for (std::size_t label : best_first(scores))
      answer.push_back({{"score", scores[label]},
                        {"label", label < labels.size() ? labels[label] : fmt::format("LABEL_{}", label)}});
    out.push_back(std::move(answer));
  }
  return (request.batch ? out : out.at(0)).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace accel::serve

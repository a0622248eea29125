#include "serve/tei_similarity_api.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "serve/float_json.hpp"
#include "serve/json_body.hpp"
#include "serve/text_options_json.hpp"

namespace accel::serve {

using nlohmann::json;

ApiResult<SimilarityRequest> parse_tei_similarity_request(std::string_view body, const RequestLimits& limits) {
  ApiResult<json> parsed = parse_json_object(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return *error;
  const json& doc = std::get<json>(parsed);
  SimilarityRequest request;
  if (auto parameters = doc.find("parameters"); parameters != doc.end() && !parameters->is_null()) {
    if (!parameters->is_object()) return bad_type("parameters", "an object");
    if (auto error = read_text_options(*parameters, request.text)) {
      error->param = "parameters." + error->param;
      error->message = "in 'parameters': " + error->message;
      return std::move(*error);
    }
  }
  auto inputs = doc.find("inputs");
  if (inputs == doc.end()) return ApiError{400, "'inputs' is required", "inputs", "missing_field"};
  if (!inputs->is_object()) return bad_type("inputs", "an object with source_sentence and sentences");
  auto source = inputs->find("source_sentence");
  if (source == inputs->end())
    return ApiError{400, "'inputs.source_sentence' is required", "inputs.source_sentence", "missing_field"};
  if (!source->is_string()) return bad_type("inputs.source_sentence", "a string");
  request.source_sentence = source->get<std::string>();
  auto sentences = inputs->find("sentences");
  if (sentences == inputs->end())
    return ApiError{400, "'inputs.sentences' is required", "inputs.sentences", "missing_field"};
  if (!sentences->is_array()) return bad_type("inputs.sentences", "an array of strings");
  if (sentences->empty())
    return ApiError{400, "'inputs.sentences' is an empty array", "inputs.sentences", "empty_input"};
  if (sentences->size() + 1 > limits.max_inputs)
    return ApiError{413,
                    fmt::format("'inputs.sentences' has {} sentences; with the source sentence, more than "
                                "max_inputs ({})",
                                sentences->size(), limits.max_inputs),
                    "inputs.sentences", "too_many_inputs"};
  for (std::size_t i = 0; i < sentences->size(); ++i) {
    const json& sentence = (*sentences)[i];
    if (!sentence.is_string()) return bad_type(fmt::format("inputs.sentences[{}]", i), "a string");
    request.sentences.push_back(sentence.get<std::string>());
  }
  return request;
}

std::vector<float> cosine_to_first(const embed::Embeddings& rows) {
  auto norm = [](std::span<const float> row) {
    double sum = 0;
    for (float v : row) sum += static_cast<double>(v) * v;
    return std::sqrt(sum);
  };
  const std::span<const float> source = rows.row(0);
  const double source_norm = norm(source);
  std::vector<float> scores;
  for (std::size_t i = 1; i < rows.count(); ++i) {
    const std::span<const float> row = rows.row(i);
    double dot = 0;
    for (std::size_t d = 0; d < row.size(); ++d) dot += static_cast<double>(source[d]) * row[d];
    const double norms = source_norm * norm(row);
    scores.push_back(norms == 0 ? 0.0F : static_cast<float>(dot / norms));
  }
  return scores;
}

std::string tei_similarity_response(const std::vector<float>& scores) {
  std::string out;
  append_json_floats(out, scores);
  return out;
}

}  // namespace accel::serve

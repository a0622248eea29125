#include "serve/tei_api.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "serve/float_json.hpp"
#include "serve/json_body.hpp"

namespace accel::serve {
namespace {

using nlohmann::json;

ApiError bad_type(const std::string& param, std::string_view expected) {
  return {400, fmt::format("'{}' must be {}", param, expected), param, "invalid_type"};
}

std::optional<ApiError> read_flag(const json& doc, const char* name, bool& flag) {
  auto found = doc.find(name);
  if (found == doc.end() || found->is_null()) return std::nullopt;
  if (!found->is_boolean()) return bad_type(name, "a boolean");
  flag = found->get<bool>();
  return std::nullopt;
}

}  // namespace

ApiResult<EmbedRequest> parse_tei_request(std::string_view body, const RequestLimits& limits) {
  ApiResult<json> parsed = parse_json_object(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return *error;
  const json& doc = std::get<json>(parsed);
  EmbedRequest request;
  bool normalize = true;
  if (auto error = read_flag(doc, "truncate", request.truncate)) return std::move(*error);
  if (auto error = read_flag(doc, "normalize", normalize)) return std::move(*error);
  if (!normalize)
    return ApiError{400, "'normalize' is false, but this model's pooling always L2-normalises its embeddings",
                    "normalize", "not_supported"};
  if (auto prompt = doc.find("prompt_name"); prompt != doc.end() && !prompt->is_null())
    return ApiError{400, "'prompt_name' is not supported: this model has no prompts", "prompt_name", "not_supported"};

  auto inputs = doc.find("inputs");
  if (inputs == doc.end()) return ApiError{400, "'inputs' is required", "inputs", "missing_field"};
  if (inputs->is_string()) {
    request.texts.push_back(inputs->get<std::string>());
    return request;
  }
  if (!inputs->is_array()) return bad_type("inputs", "a string or an array of strings");
  if (inputs->empty()) return ApiError{400, "'inputs' is an empty array", "inputs", "empty_input"};
  if (inputs->size() > limits.max_inputs)
    return ApiError{413,
                    fmt::format("'inputs' has {} inputs, more than max_inputs ({})", inputs->size(), limits.max_inputs),
                    "inputs", "too_many_inputs"};
  request.texts.reserve(inputs->size());
  for (std::size_t i = 0; i < inputs->size(); ++i) {
    const json& text = (*inputs)[i];
    if (!text.is_string()) return bad_type(fmt::format("inputs[{}]", i), "a string");
    request.texts.push_back(text.get<std::string>());
  }
  return request;
}

std::string tei_response(const embed::Embeddings& embeddings) {
  std::string out = "[";
  for (std::size_t i = 0; i < embeddings.count(); ++i) {
    if (i > 0) out += ',';
    append_json_floats(out, embeddings.row(i));
  }
  out += ']';
  return out;
}

}  // namespace accel::serve

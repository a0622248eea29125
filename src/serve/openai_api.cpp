#include "serve/openai_api.hpp"

#include <fmt/format.h>

#include <iterator>
#include <nlohmann/json.hpp>

#include "serve/embedding_codec.hpp"
#include "serve/json_body.hpp"
#include "serve/text_options_json.hpp"

namespace accel::serve {
namespace {

using nlohmann::json;

// One token array: ids of the model's vocabulary, 1 to max_sequence_length of them.
ApiResult<std::vector<std::int32_t>> token_array(const json& value, const std::string& param,
                                                 const RequestLimits& limits) {
  if (value.empty()) return ApiError{400, fmt::format("'{}' is an empty token array", param), param, "empty_input"};
  if (limits.max_sequence_length > 0 && value.size() > limits.max_sequence_length)
    return ApiError{413,
                    fmt::format("'{}' has {} tokens, more than the model's max_sequence_length ({})", param,
                                value.size(), limits.max_sequence_length),
                    param, "input_too_long"};
  std::vector<std::int32_t> ids;
  ids.reserve(value.size());
  for (std::size_t j = 0; j < value.size(); ++j) {
    const json& id = value[j];
    const std::string at = fmt::format("{}[{}]", param, j);
    if (!id.is_number_integer()) return bad_type(at, "an integer token id");
    const auto number = id.get<std::int64_t>();
    if (number < 0 || (limits.vocabulary > 0 && number >= limits.vocabulary))
      return ApiError{
          400, fmt::format("'{}' is token id {}, outside the model's vocabulary of {}", at, number, limits.vocabulary),
          at, "invalid_token"};
    ids.push_back(static_cast<std::int32_t>(number));
  }
  return ids;
}

// `input`: a string, an array of strings, an array of token arrays, or one token array.
std::optional<ApiError> read_input(const json& input, const RequestLimits& limits, EmbedRequest& request) {
  if (input.is_string()) {
    request.texts.push_back(input.get<std::string>());
    return std::nullopt;
  }
  if (!input.is_array()) return bad_type("input", "a string, an array of strings or an array of token arrays");
  if (input.empty()) return ApiError{400, "'input' is an empty array", "input", "empty_input"};
  if (input.front().is_number_integer()) {
    ApiResult<std::vector<std::int32_t>> ids = token_array(input, "input", limits);
    if (auto* error = std::get_if<ApiError>(&ids)) return std::move(*error);
    request.token_inputs.push_back(std::move(std::get<0>(ids)));
    return std::nullopt;
  }
  if (input.size() > limits.max_inputs)
    return ApiError{413,
                    fmt::format("'input' has {} inputs, more than max_inputs ({})", input.size(), limits.max_inputs),
                    "input", "too_many_inputs"};
  const bool tokens = input.front().is_array();
  for (std::size_t i = 0; i < input.size(); ++i) {
    const std::string at = fmt::format("input[{}]", i);
    if (tokens) {
      if (!input[i].is_array()) return bad_type(at, "a token array, as input[0] is");
      ApiResult<std::vector<std::int32_t>> ids = token_array(input[i], at, limits);
      if (auto* error = std::get_if<ApiError>(&ids)) return std::move(*error);
      request.token_inputs.push_back(std::move(std::get<0>(ids)));
    } else {
      if (!input[i].is_string()) return bad_type(at, "a string, as input[0] is");
      request.texts.push_back(input[i].get<std::string>());
    }
  }
  return std::nullopt;
}

std::optional<ApiError> read_options(const json& doc, const RequestLimits& limits, EmbedRequest& request) {
  if (auto model = doc.find("model"); model != doc.end()) {
    if (!model->is_string()) return bad_type("model", "a string");
    request.model = model->get<std::string>();
  }
  if (auto format = doc.find("encoding_format"); format != doc.end() && !format->is_null()) {
    if (!format->is_string()) return bad_type("encoding_format", kEncodingNames);
    const auto& name = format->get_ref<const std::string&>();
    std::optional<Encoding> encoding = encoding_named(name);
    if (!encoding)
      return ApiError{400, fmt::format("'encoding_format' is \"{}\"; it must be {}", name, kEncodingNames),
                      "encoding_format", "invalid_value"};
    request.encoding = *encoding;
  }
  if (auto dimensions = doc.find("dimensions"); dimensions != doc.end() && !dimensions->is_null()) {
    if (!dimensions->is_number_integer()) return bad_type("dimensions", "an integer");
    const auto wanted = dimensions->get<std::int64_t>();
    if (wanted < 1 || wanted > limits.dimensions)
      return ApiError{400,
                      fmt::format("'dimensions' is {}; this model's embeddings have {} dimensions, and 'dimensions' "
                                  "must be 1 to {}",
                                  wanted, limits.dimensions, limits.dimensions),
                      "dimensions", "invalid_value"};
    request.dimensions = static_cast<std::uint32_t>(wanted);
  }
  if (std::optional<ApiError> error = read_text_options(doc, request.text)) return error;
  if (auto user = doc.find("user"); user != doc.end() && !user->is_string()) return bad_type("user", "a string");
  return std::nullopt;
}

}  // namespace

ApiResult<EmbedRequest> parse_openai_request(std::string_view body, const RequestLimits& limits) {
  ApiResult<json> parsed = parse_json_object(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return *error;
  const json& doc = std::get<json>(parsed);
  auto input = doc.find("input");
  if (input == doc.end()) return ApiError{400, "'input' is required", "input", "missing_field"};
  EmbedRequest request;
  if (std::optional<ApiError> error = read_options(doc, limits, request)) return std::move(*error);
  if (std::optional<ApiError> error = read_input(*input, limits, request)) return std::move(*error);
  return request;
}

std::string openai_response(const embed::Embeddings& embeddings, const EmbedRequest& request) {
  std::string out = R"({"object":"list","data":[)";
  std::uint64_t tokens = 0;
  for (std::size_t i = 0; i < embeddings.count(); ++i) {
    tokens += embeddings.tokens[i];
    fmt::format_to(std::back_inserter(out), R"({}{{"object":"embedding","index":{},"embedding":)", i > 0 ? "," : "", i);
    append_encoded_row(out, embeddings.row(i), request.encoding);
    out += '}';
  }
  fmt::format_to(std::back_inserter(out), R"(],"model":{},"usage":{{"prompt_tokens":{},"total_tokens":{}}}}})",
                 json(request.model).dump(), tokens, tokens);
  return out;
}

}  // namespace accel::serve

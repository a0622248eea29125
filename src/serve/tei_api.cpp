#include "serve/tei_api.hpp"

#include <fmt/format.h>

#include <iterator>
#include <nlohmann/json.hpp>

#include "serve/float_json.hpp"
#include "serve/json_body.hpp"
#include "serve/text_options_json.hpp"

namespace accel::serve {
namespace {

using nlohmann::json;

std::optional<ApiError> read_dimensions(const json& doc, const RequestLimits& limits, EmbedRequest& request) {
  auto dimensions = doc.find("dimensions");
  if (dimensions == doc.end() || dimensions->is_null()) return std::nullopt;
  if (!dimensions->is_number_integer()) return bad_type("dimensions", "an integer");
  const auto wanted = dimensions->get<std::int64_t>();
  if (wanted < 1 || wanted > limits.dimensions)
    return ApiError{
        400, fmt::format("'dimensions' is {}; it must be 1 to the model's {} dimensions", wanted, limits.dimensions),
        "dimensions", "invalid_value"};
  request.dimensions = static_cast<std::uint32_t>(wanted);
  return std::nullopt;
}

}  // namespace

ApiResult<std::vector<std::string>> read_tei_inputs(const json& doc, const RequestLimits& limits) {
  auto inputs = doc.find("inputs");
  if (inputs == doc.end()) return ApiError{400, "'inputs' is required", "inputs", "missing_field"};
  if (inputs->is_string()) return std::vector<std::string>{inputs->get<std::string>()};
  if (!inputs->is_array()) return bad_type("inputs", "a string or an array of strings");
  if (inputs->empty()) return ApiError{400, "'inputs' is an empty array", "inputs", "empty_input"};
  if (inputs->size() > limits.max_inputs)
    return ApiError{413,
                    fmt::format("'inputs' has {} inputs, more than max_inputs ({})", inputs->size(), limits.max_inputs),
                    "inputs", "too_many_inputs"};
  std::vector<std::string> texts;
  texts.reserve(inputs->size());
  for (std::size_t i = 0; i < inputs->size(); ++i) {
    const json& text = (*inputs)[i];
    if (!text.is_string()) return bad_type(fmt::format("inputs[{}]", i), "a string");
    texts.push_back(text.get<std::string>());
  }
  return texts;
}

ApiResult<EmbedRequest> parse_tei_embed_request(std::string_view body, const RequestLimits& limits, TeiEmbedKind kind) {
  ApiResult<json> parsed = parse_json_object(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return *error;
  const json& doc = std::get<json>(parsed);
  EmbedRequest request;
  if (auto error = read_text_options(doc, request.text)) return std::move(*error);
  if (kind == TeiEmbedKind::sparse) {
    if (auto error = refuse_field(doc, "dimensions", "a sparse vector is not cut")) return std::move(*error);
    if (auto error = refuse_field(doc, "normalize", "SPLADE weights are not normalised")) return std::move(*error);
  } else {
    request.normalize = true;
    if (auto error = read_flag(doc, "normalize", request.normalize)) return std::move(*error);
    if (!request.normalize && limits.normalized)
      return ApiError{400, "'normalize' is false, but this model's pooling always L2-normalises its embeddings",
                      "normalize", "not_supported"};
    if (auto error = read_dimensions(doc, limits, request)) return std::move(*error);
  }
  ApiResult<std::vector<std::string>> texts = read_tei_inputs(doc, limits);
  if (auto* error = std::get_if<ApiError>(&texts)) return std::move(*error);
  request.texts = std::move(std::get<0>(texts));
  return request;
}

std::string tei_embed_response(const embed::Embeddings& embeddings) {
  std::string out = "[";
  for (std::size_t i = 0; i < embeddings.count(); ++i) {
    if (i > 0) out += ',';
    append_json_floats(out, embeddings.row(i));
  }
  out += ']';
  return out;
}

std::string tei_sparse_response(const embed::Embeddings& embeddings) {
  std::string out = "[";
  for (std::size_t i = 0; i < embeddings.count(); ++i) {
    out += i > 0 ? ",[" : "[";
    bool first = true;
    for (const auto& [index, value] : embeddings.nonzeros(i)) {
      // fmt writes a float in its shortest form that reads back the same, as append_json_floats does.
      fmt::format_to(std::back_inserter(out), R"({}{{"index":{},"value":{}}})", first ? "" : ",", index, value);
      first = false;
    }
    out += ']';
  }
  out += ']';
  return out;
}

ApiResult<TokenizeRequest> parse_tei_tokenize_request(std::string_view body, const RequestLimits& limits) {
  ApiResult<json> parsed = parse_json_object(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return *error;
  const json& doc = std::get<json>(parsed);
  TokenizeRequest request;
  if (auto error = read_flag(doc, "add_special_tokens", request.add_special_tokens)) return std::move(*error);
  if (auto error = read_text_options(doc, request.text)) return std::move(*error);
  ApiResult<std::vector<std::string>> texts = read_tei_inputs(doc, limits);
  if (auto* error = std::get_if<ApiError>(&texts)) return std::move(*error);
  request.texts = std::move(std::get<0>(texts));
  return request;
}

std::string tei_tokenize_response(const std::vector<text::Encoding>& encodings,
                                  const std::vector<std::string>& prompted_texts) {
  json out = json::array();
  for (std::size_t i = 0; i < encodings.size(); ++i) {
    const text::Encoding& encoding = encodings[i];
    json tokens = json::array();
    for (std::size_t t = 0; t < encoding.ids.size(); ++t) {
      const bool special = !encoding.special_tokens_mask.empty() && encoding.special_tokens_mask[t] != 0;
      const text::Range range = encoding.offsets[t];
      json token = {{"id", encoding.ids[t]}, {"special", special}};
      if (special) {
        token["text"] = encoding.tokens[t];
        token["start"] = nullptr;
        token["stop"] = nullptr;
      } else {
        token["text"] = prompted_texts[i].substr(range.begin, range.end - range.begin);
        token["start"] = range.begin;
        token["stop"] = range.end;
      }
      tokens.push_back(std::move(token));
    }
    out.push_back(std::move(tokens));
  }
  // A byte range may split a character a normaliser changed; such text is replaced, never answered as bad UTF-8.
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace accel::serve

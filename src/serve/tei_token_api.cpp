#include "serve/tei_token_api.hpp"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "serve/float_json.hpp"
#include "serve/json_body.hpp"
#include "serve/tei_api.hpp"
#include "serve/text_options_json.hpp"

namespace accel::serve {
namespace {

using nlohmann::json;

// One sequence of ids at `field` ("ids", "ids[2]"). TEI reads ids as u32; the tokenizer's ids are below 2^31, and
// an id above that is outside every vocabulary, which decoding leaves out, so it is kept as -1 (no token).
ApiResult<std::vector<std::int32_t>> read_id_sequence(const json& list, const std::string& field) {
  std::vector<std::int32_t> ids;
  ids.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& id = list[i];
    if (!id.is_number_unsigned() || id.get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max())
      return bad_type(fmt::format("{}[{}]", field, i), "a token id (an integer from 0 to 4294967295)");
    const std::uint64_t value = id.get<std::uint64_t>();
    ids.push_back(value > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())
                      ? -1
                      : static_cast<std::int32_t>(value));
  }
  return ids;
}

}  // namespace

ApiResult<DecodeRequest> parse_tei_decode_request(std::string_view body, const RequestLimits& limits) {
  ApiResult<json> parsed = parse_json_object(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return *error;
  const json& doc = std::get<json>(parsed);
  DecodeRequest request;
  if (auto error = read_flag(doc, "skip_special_tokens", request.skip_special_tokens)) return std::move(*error);
  auto ids = doc.find("ids");
  if (ids == doc.end()) return ApiError{400, "'ids' is required", "ids", "missing_field"};
  if (!ids->is_array()) return bad_type("ids", "an array of token ids or an array of arrays of them");
  // TEI's InputIds: an array of arrays is a batch; any other array (the empty one too) one sequence.
  const bool batch = !ids->empty() && ids->front().is_array();
  if (!batch) {
    ApiResult<std::vector<std::int32_t>> one = read_id_sequence(*ids, "ids");
    if (auto* error = std::get_if<ApiError>(&one)) return std::move(*error);
    request.sequences.push_back(std::move(std::get<0>(one)));
    return request;
  }
  if (ids->size() > limits.max_inputs)
    return ApiError{413,
                    fmt::format("'ids' has {} sequences, more than max_inputs ({})", ids->size(), limits.max_inputs),
                    "ids", "too_many_inputs"};
  for (std::size_t i = 0; i < ids->size(); ++i) {
    const std::string field = fmt::format("ids[{}]", i);
    if (!(*ids)[i].is_array()) return bad_type(field, "an array of token ids");
    ApiResult<std::vector<std::int32_t>> one = read_id_sequence((*ids)[i], field);
    if (auto* error = std::get_if<ApiError>(&one)) return std::move(*error);
    request.sequences.push_back(std::move(std::get<0>(one)));
  }
  return request;
}

std::string tei_decode_response(const std::vector<std::string>& texts) {
  // A decoded text is valid UTF-8 (Tokenizer::decode); replace is the guard should it ever not be.
  return json(texts).dump(-1, ' ', false, json::error_handler_t::replace);
}

ApiResult<EmbedRequest> parse_tei_embed_all_request(std::string_view body, const RequestLimits& limits) {
  ApiResult<json> parsed = parse_json_object(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return *error;
  const json& doc = std::get<json>(parsed);
  EmbedRequest request;
  if (auto error = read_text_options(doc, request.text)) return std::move(*error);
  if (auto error = refuse_field(doc, "normalize", "token vectors are not normalised")) return std::move(*error);
  if (auto error = refuse_field(doc, "dimensions", "token vectors are not cut")) return std::move(*error);
  ApiResult<std::vector<std::string>> texts = read_tei_inputs(doc, limits);
  if (auto* error = std::get_if<ApiError>(&texts)) return std::move(*error);
  request.texts = std::move(std::get<0>(texts));
  return request;
}

std::string tei_embed_all_response(const embed::Embeddings& vectors) {
  std::string out = "[";
  std::size_t row = 0;
  for (std::size_t s = 0; s < vectors.count(); ++s) {
    out += s > 0 ? ",[" : "[";
    for (std::uint32_t t = 0; t < vectors.tokens[s]; ++t, ++row) {
      if (t > 0) out += ',';
      append_json_floats(out, vectors.row(row));
    }
    out += ']';
  }
  out += ']';
  return out;
}

}  // namespace accel::serve

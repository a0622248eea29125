// The first step of every request parser: the body as a JSON object, or the 400 to answer instead.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "serve/api_error.hpp"

namespace accel::serve {

inline ApiResult<nlohmann::json> parse_json_object(std::string_view body) {
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return ApiError{400, "the request body is not valid JSON", "", "invalid_json"};
  if (!doc.is_object()) return ApiError{400, "the request body must be a JSON object", "", "invalid_type"};
  return doc;
}

}  // namespace accel::serve

#include "serve/text_options_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace accel::serve {

std::optional<ApiError> read_flag(const nlohmann::json& doc, const char* name, bool& flag) {
  auto found = doc.find(name);
  if (found == doc.end() || found->is_null()) return std::nullopt;
  if (!found->is_boolean()) return bad_type(name, "a boolean");
  flag = found->get<bool>();
  return std::nullopt;
}

std::optional<ApiError> refuse_field(const nlohmann::json& doc, const char* name, std::string_view why) {
  auto found = doc.find(name);
  if (found == doc.end() || found->is_null()) return std::nullopt;
  return ApiError{400, fmt::format("'{}' is not taken here: {}", name, why), name, "not_supported"};
}

std::optional<ApiError> read_text_options(const nlohmann::json& doc, TextOptions& options) {
  if (auto truncate = doc.find("truncate"); truncate != doc.end() && !truncate->is_null()) {
    if (!truncate->is_boolean()) return bad_type("truncate", "a boolean");
    options.truncate = truncate->get<bool>();
  }
  if (auto direction = doc.find("truncation_direction"); direction != doc.end() && !direction->is_null()) {
    if (!direction->is_string()) return bad_type("truncation_direction", "\"left\" or \"right\"");
    std::string name = direction->get<std::string>();
    std::ranges::transform(name, name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name == "left") {
      options.direction = embed::Truncation::left;
    } else if (name == "right") {
      options.direction = embed::Truncation::right;
    } else {
      return ApiError{400,
                      fmt::format("'truncation_direction' is {}; it must be \"left\" or \"right\"", direction->dump()),
                      "truncation_direction", "invalid_value"};
    }
  }
  if (auto prompt = doc.find("prompt_name"); prompt != doc.end() && !prompt->is_null()) {
    if (!prompt->is_string()) return bad_type("prompt_name", "a string");
    options.prompt_name = prompt->get<std::string>();
  }
  return std::nullopt;
}

}  // namespace accel::serve

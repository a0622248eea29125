// The fields every text-taking route reads the same way, in both APIs: `truncate` (a boolean),
// `truncation_direction` ("left" or "right", either case, as TEI's clients send "Left"/"Right" and its own docs
// "left"/"right") and `prompt_name` (a string). Each wrong type is 400 naming the field.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"

namespace accel::serve {

[[nodiscard]] std::optional<ApiError> read_text_options(const nlohmann::json& doc, TextOptions& options);

// A boolean field if present and not null; 400 naming it when it is another type.
[[nodiscard]] std::optional<ApiError> read_flag(const nlohmann::json& doc, const char* name, bool& flag);

// A field this route does not take, refused (400 naming it) rather than ignored: a client that sends it expects
// its effect.
[[nodiscard]] std::optional<ApiError> refuse_field(const nlohmann::json& doc, const char* name, std::string_view why);

}  // namespace accel::serve

#include "text/tokenizer/json_fields.hpp"

#include <limits>

namespace accel::text::json_fields {

std::string child(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}

std::string indexed(std::string_view path, std::size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

std::string shown(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr std::size_t kLongest = 80;
  if (text.size() > kLongest) text = text.substr(0, kLongest - 3) + "...";
  return text;
}

Status refused(std::string_view path, const json& value, std::string_view why) {
  return invalid_argument("tokenizer.json: " + std::string(path.empty() ? "the document" : path) + " is " +
                          shown(value) + "; " + std::string(why));
}

Status unsupported_type(std::string_view path, std::string_view type, std::string_view stage,
                        std::string_view supported) {
  return refused(
      child(path, "type"), json(std::string(type)),
      std::string(stage) + " " + std::string(type) + " is not supported (we run: " + std::string(supported) + ")");
}

Result<const json*> member(const json& parent, std::string_view path, std::string_view key) {
  if (!parent.is_object()) return refused(path, parent, "expected an object");
  const auto found = parent.find(key);
  if (found == parent.end()) return invalid_argument("tokenizer.json: " + child(path, key) + " is missing");
  return &*found;
}

Result<const json*> optional_member(const json& parent, std::string_view path, std::string_view key) {
  if (!parent.is_object()) return refused(path, parent, "expected an object");
  const auto found = parent.find(key);
  if (found == parent.end() || found->is_null()) return static_cast<const json*>(nullptr);
  return &*found;
}

Result<std::string> string_member(const json& parent, std::string_view path, std::string_view key) {
  ACCEL_ASSIGN_OR_RETURN(const json* value, member(parent, path, key));
  if (!value->is_string()) return refused(child(path, key), *value, "expected a string");
  return value->get<std::string>();
}

Result<bool> bool_member(const json& parent, std::string_view path, std::string_view key) {
  ACCEL_ASSIGN_OR_RETURN(const json* value, member(parent, path, key));
  if (!value->is_boolean()) return refused(child(path, key), *value, "expected true or false");
  return value->get<bool>();
}

Result<bool> bool_member_or(const json& parent, std::string_view path, std::string_view key, bool fallback) {
  ACCEL_ASSIGN_OR_RETURN(const json* value, optional_member(parent, path, key));
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) return refused(child(path, key), *value, "expected true or false");
  return value->get<bool>();
}

Result<std::string> string_member_or(const json& parent, std::string_view path, std::string_view key,
                                     std::string_view fallback) {
  ACCEL_ASSIGN_OR_RETURN(const json* value, optional_member(parent, path, key));
  if (value == nullptr) return std::string(fallback);
  if (!value->is_string()) return refused(child(path, key), *value, "expected a string");
  return value->get<std::string>();
}

Result<std::uint64_t> count_member(const json& parent, std::string_view path, std::string_view key,
                                   std::uint64_t limit) {
  ACCEL_ASSIGN_OR_RETURN(const json* value, member(parent, path, key));
  if (!value->is_number_integer() ||
      (value->is_number_integer() && !value->is_number_unsigned() && value->get<std::int64_t>() < 0) ||
      value->get<std::uint64_t>() > limit) {
    return refused(child(path, key), *value, "expected an integer from 0 to " + std::to_string(limit));
  }
  return value->get<std::uint64_t>();
}

Result<double> number_member(const json& parent, std::string_view path, std::string_view key) {
  ACCEL_ASSIGN_OR_RETURN(const json* value, member(parent, path, key));
  if (!value->is_number()) return refused(child(path, key), *value, "expected a number");
  return value->get<double>();
}

Result<std::int32_t> token_id(const json& value, std::string_view path) {
  if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<std::int64_t>() < 0) ||
      value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
    return refused(path, value, "expected a token id (an integer from 0 to 2^31-1)");
  }
  return static_cast<std::int32_t>(value.get<std::int64_t>());
}

Result<std::string> type_of(const json& component, std::string_view path) {
  return string_member(component, path, "type");
}

}  // namespace accel::text::json_fields

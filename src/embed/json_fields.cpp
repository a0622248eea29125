#include "embed/json_fields.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

namespace accel::embed {

using nlohmann::json;

Status field_error(const std::filesystem::path& file, std::string_view field, std::string_view what) {
  return invalid_argument(fmt::format("{}: field '{}': {}", file.native(), field, what));
}

Status file_error(const std::filesystem::path& file, std::string_view what) {
  return invalid_argument(fmt::format("{}: {}", file.native(), what));
}

Result<json> read_json(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return file_error(file, "cannot be read (missing?)");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::exception& e) {
    return file_error(file, fmt::format("not valid JSON: {}", e.what()));
  }
}

Result<json> read_object(const std::filesystem::path& file) {
  ACCEL_ASSIGN_OR_RETURN(json document, read_json(file));
  if (!document.is_object()) return file_error(file, "is not a JSON object");
  return document;
}

Result<std::uint32_t> Fields::u32(std::string_view field, std::uint32_t minimum) const {
  ACCEL_ASSIGN_OR_RETURN(const json* value, get(field));
  if (!value->is_number_unsigned() || value->get<std::uint64_t>() < minimum ||
      value->get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max())
    return error(field, fmt::format("{} is not an integer in [{}, 2^32)", value->dump(), minimum));
  return static_cast<std::uint32_t>(value->get<std::uint64_t>());
}

Result<std::uint32_t> Fields::u32_or(std::string_view field, std::uint32_t fallback) const {
  return has(field) && !object_.at(field).is_null() ? u32(field, 0) : Result<std::uint32_t>(fallback);
}

Result<double> Fields::positive(std::string_view field) const {
  ACCEL_ASSIGN_OR_RETURN(const json* value, get(field));
  if (!value->is_number() || !std::isfinite(value->get<double>()) || value->get<double>() <= 0)
    return error(field, fmt::format("{} is not a positive number", value->dump()));
  return value->get<double>();
}

Result<double> Fields::positive_or(std::string_view field, double fallback) const {
  return has(field) ? positive(field) : Result<double>(fallback);
}

Result<std::string> Fields::string(std::string_view field) const {
  ACCEL_ASSIGN_OR_RETURN(const json* value, get(field));
  if (!value->is_string()) return error(field, fmt::format("{} is not a string", value->dump()));
  return value->get<std::string>();
}

Result<std::string> Fields::string_or(std::string_view field, std::string fallback) const {
  return has(field) && !object_.at(field).is_null() ? string(field) : Result<std::string>(std::move(fallback));
}

Result<bool> Fields::boolean_or(std::string_view field, bool fallback) const {
  if (!has(field)) return fallback;
  ACCEL_ASSIGN_OR_RETURN(const json* value, get(field));
  if (!value->is_boolean()) return error(field, fmt::format("{} is not true or false", value->dump()));
  return value->get<bool>();
}

Status Fields::error(std::string_view field, std::string_view what) const { return field_error(file_, field, what); }

Result<const json*> Fields::get(std::string_view field) const {
  const auto found = object_.find(field);
  if (found == object_.end()) return error(field, "missing");
  return &*found;
}

}  // namespace accel::embed

// JSON fields of a model folder's configs, each read with the file it came from, so that every refusal names
// the file, the field and what was wrong with it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "accel/core/result.hpp"

namespace accel::embed {

[[nodiscard]] Status field_error(const std::filesystem::path& file, std::string_view field, std::string_view what);
[[nodiscard]] Status file_error(const std::filesystem::path& file, std::string_view what);

// The file parsed (invalid_argument naming it when it is missing or not JSON).
[[nodiscard]] Result<nlohmann::json> read_json(const std::filesystem::path& file);
// read_json, refusing anything but an object.
[[nodiscard]] Result<nlohmann::json> read_object(const std::filesystem::path& file);

class Fields {
 public:
  Fields(const nlohmann::json& object, const std::filesystem::path& file) : object_(object), file_(file) {}

  [[nodiscard]] bool has(std::string_view field) const { return object_.contains(field); }
  [[nodiscard]] const nlohmann::json& object() const noexcept { return object_; }
  [[nodiscard]] const std::filesystem::path& file() const noexcept { return file_; }

  [[nodiscard]] Result<std::uint32_t> u32(std::string_view field, std::uint32_t minimum) const;
  [[nodiscard]] Result<std::uint32_t> u32_or(std::string_view field, std::uint32_t fallback) const;
  [[nodiscard]] Result<double> positive(std::string_view field) const;
  [[nodiscard]] Result<double> positive_or(std::string_view field, double fallback) const;
  [[nodiscard]] Result<std::string> string(std::string_view field) const;
  [[nodiscard]] Result<std::string> string_or(std::string_view field, std::string fallback) const;
  [[nodiscard]] Result<bool> boolean_or(std::string_view field, bool fallback) const;

  [[nodiscard]] Status error(std::string_view field, std::string_view what) const;

 private:
  [[nodiscard]] Result<const nlohmann::json*> get(std::string_view field) const;

  const nlohmann::json& object_;
  const std::filesystem::path& file_;
};

}  // namespace accel::embed

#include "cli/text_input.hpp"

#include <fmt/format.h>
#include <utf8proc.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string_view>

namespace accel::cli {
namespace {

bool valid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  auto left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    utf8proc_int32_t code_point = 0;
    const utf8proc_ssize_t used = utf8proc_iterate(bytes, left, &code_point);
    if (used <= 0) return false;
    bytes += used;
    left -= used;
  }
  return true;
}

}  // namespace

std::variant<std::vector<std::string>, InputFailure> read_texts(const std::string& input,
                                                                const std::string& input_format) {
  std::ifstream file;
  if (input != "-") {
    file.open(input);
    if (!file) return InputFailure{kBadFile, fmt::format("cannot read {}", input)};
  }
  std::istream& in = input == "-" ? std::cin : file;
  std::vector<std::string> texts;
  bool jsonl = input_format == "jsonl" || (input_format == "auto" && input.ends_with(".jsonl"));
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!valid_utf8(line)) return InputFailure{kBadLine, fmt::format("line {} is not valid UTF-8", number)};
    if (number == 1 && input_format == "auto" && line.starts_with('{')) jsonl = true;
    if (!jsonl) {
      texts.push_back(std::move(line));
      continue;
    }
    const nlohmann::json object = nlohmann::json::parse(line, nullptr, false);
    if (!object.is_object() || !object.contains("text") || !object["text"].is_string())
      return InputFailure{kBadLine, fmt::format("line {} is not a JSON object with a \"text\" string", number)};
    texts.push_back(object["text"].get<std::string>());
  }
  if (in.bad()) return InputFailure{kBadFile, fmt::format("reading {} failed", input)};
  return texts;
}

}  // namespace accel::cli

// make_pre_tokenizer: reads a "pre_tokenizer" object with the fields, defaults and refusals of tokenizers' serde
// definitions (a missing field that tokenizers requires is refused here too; unknown fields are ignored, as there).
#include <array>
#include <string>
#include <utility>

#include "text/tokenizer/components.hpp"
#include "text/tokenizer/json_fields.hpp"
#include "text/tokenizer/pre_tokenizers.hpp"
#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

using json_fields::child;
using json_fields::json;

constexpr std::string_view kSupported =
    "BertPreTokenizer, Whitespace, WhitespaceSplit, Metaspace, ByteLevel, Split, Punctuation, Digits, Sequence";
// Sequences nested deeper than this are refused rather than recursed into.
constexpr int kDeepestSequence = 16;

Result<SplitBehavior> behavior_of(const json& value, std::string_view path) {
  static constexpr std::array<std::pair<std::string_view, SplitBehavior>, 5> kNames = {{
      {"Removed", SplitBehavior::removed},
      {"Isolated", SplitBehavior::isolated},
      {"MergedWithPrevious", SplitBehavior::merged_with_previous},
      {"MergedWithNext", SplitBehavior::merged_with_next},
      {"Contiguous", SplitBehavior::contiguous},
  }};
  if (value.is_string()) {
    const auto& name = value.get_ref<const std::string&>();
    for (const auto& [known, behavior] : kNames) {
      if (name == known) return behavior;
    }
  }
  return json_fields::refused(path, value,
                              "expected one of \"Removed\", \"Isolated\", \"MergedWithPrevious\", \"MergedWithNext\", "
                              "\"Contiguous\"");
}

// A string holding exactly one code point (serde's char).
Result<char32_t> code_point_member(const json& object, std::string_view path, std::string_view key) {
  ACCEL_ASSIGN_OR_RETURN(std::string text, json_fields::string_member(object, path, key));
  const std::size_t length = text.empty() ? 0 : utf8::sequence_length(static_cast<unsigned char>(text[0]));
  bool one_code_point = !text.empty() && text.size() == length;
  for (std::size_t k = 1; one_code_point && k < length; ++k) {
    one_code_point = (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80;
  }
  if (!one_code_point) return json_fields::refused(child(path, key), json(text), "expected a single character");
  std::size_t i = 0;
  return utf8::decode(text, i);
}

Result<MetaspaceOptions> metaspace_options(const json& object, std::string_view path) {
  MetaspaceOptions options;
  ACCEL_ASSIGN_OR_RETURN(options.replacement, code_point_member(object, path, "replacement"));
  ACCEL_ASSIGN_OR_RETURN(options.split, json_fields::bool_member_or(object, path, "split", true));
  ACCEL_ASSIGN_OR_RETURN(const json* scheme, json_fields::optional_member(object, path, "prepend_scheme"));
  if (scheme != nullptr) {
    if (*scheme == "always") {
      options.prepend_scheme = PrependScheme::always;
    } else if (*scheme == "first") {
      options.prepend_scheme = PrependScheme::first;
    } else if (*scheme == "never") {
      options.prepend_scheme = PrependScheme::never;
    } else {
      return json_fields::refused(child(path, "prepend_scheme"), *scheme,
                                  "expected \"always\", \"first\" or \"never\"");
    }
  }
  // The older form: add_prefix_space false means "never", and contradicts any other declared scheme.
  ACCEL_ASSIGN_OR_RETURN(const json* add_prefix_space, json_fields::optional_member(object, path, "add_prefix_space"));
  if (add_prefix_space != nullptr) {
    if (!add_prefix_space->is_boolean()) {
      return json_fields::refused(child(path, "add_prefix_space"), *add_prefix_space, "expected true or false");
    }
    if (!add_prefix_space->get<bool>()) {
      if (options.prepend_scheme != PrependScheme::never) {
        return json_fields::refused(child(path, "add_prefix_space"), *add_prefix_space,
                                    "it contradicts prepend_scheme (which is \"always\" unless stated)");
      }
    }
  }
  return options;
}

Result<std::unique_ptr<PreTokenizer>> make(const json& object, std::string_view path, int depth);

Result<std::unique_ptr<PreTokenizer>> make_sequence_of(const json& object, std::string_view path, int depth) {
  if (depth >= kDeepestSequence) {
    return json_fields::refused(path, object, "Sequence pre-tokenizers are nested too deeply");
  }
  ACCEL_ASSIGN_OR_RETURN(const json* steps, json_fields::member(object, path, "pretokenizers"));
  const std::string steps_path = child(path, "pretokenizers");
  if (!steps->is_array()) return json_fields::refused(steps_path, *steps, "expected an array");
  std::vector<std::unique_ptr<PreTokenizer>> made;
  made.reserve(steps->size());
  for (std::size_t i = 0; i < steps->size(); ++i) {
    ACCEL_ASSIGN_OR_RETURN(auto step, make((*steps)[i], json_fields::indexed(steps_path, i), depth + 1));
    made.push_back(std::move(step));
  }
  return make_sequence(std::move(made));
}

Result<std::unique_ptr<PreTokenizer>> make(const json& object, std::string_view path, int depth) {
  ACCEL_ASSIGN_OR_RETURN(const std::string type, json_fields::type_of(object, path));
  if (type == "BertPreTokenizer") return make_bert_pre_tokenizer();
  if (type == "Whitespace") return make_whitespace();
  if (type == "WhitespaceSplit") return make_whitespace_split();
  if (type == "Punctuation") {
    ACCEL_ASSIGN_OR_RETURN(const json* behavior, json_fields::optional_member(object, path, "behavior"));
    if (behavior == nullptr) return make_punctuation(SplitBehavior::isolated);
    ACCEL_ASSIGN_OR_RETURN(SplitBehavior parsed, behavior_of(*behavior, child(path, "behavior")));
    return make_punctuation(parsed);
  }
  if (type == "Digits") {
    ACCEL_ASSIGN_OR_RETURN(bool individual_digits, json_fields::bool_member(object, path, "individual_digits"));
    return make_digits(individual_digits);
  }
  if (type == "Metaspace") {
    ACCEL_ASSIGN_OR_RETURN(MetaspaceOptions options, metaspace_options(object, path));
    return make_metaspace(options);
  }
  if (type == "ByteLevel") {
    ByteLevelOptions options;
    ACCEL_ASSIGN_OR_RETURN(options.add_prefix_space, json_fields::bool_member(object, path, "add_prefix_space"));
    ACCEL_ASSIGN_OR_RETURN(bool trim_offsets, json_fields::bool_member(object, path, "trim_offsets"));
    static_cast<void>(trim_offsets);  // required and checked as tokenizers does; only the post-processor uses it
    ACCEL_ASSIGN_OR_RETURN(options.use_regex, json_fields::bool_member_or(object, path, "use_regex", true));
    return make_byte_level(options);
  }
  if (type == "Split") {
    ACCEL_ASSIGN_OR_RETURN(const json* pattern_object, json_fields::member(object, path, "pattern"));
    ACCEL_ASSIGN_OR_RETURN(Pattern pattern, Pattern::from_json(*pattern_object, child(path, "pattern")));
    ACCEL_ASSIGN_OR_RETURN(const json* behavior, json_fields::member(object, path, "behavior"));
    ACCEL_ASSIGN_OR_RETURN(SplitBehavior parsed, behavior_of(*behavior, child(path, "behavior")));
    ACCEL_ASSIGN_OR_RETURN(bool invert, json_fields::bool_member(object, path, "invert"));
    return make_split(std::move(pattern), parsed, invert);
  }
  if (type == "Sequence") return make_sequence_of(object, path, depth);
  return json_fields::unsupported_type(path, type, "pre-tokenizer", kSupported);
}

}  // namespace

Result<std::unique_ptr<PreTokenizer>> make_pre_tokenizer(const nlohmann::json& object, std::string_view path) {
  return make(object, path, 0);
}

}  // namespace accel::text

#include "embed/tokenizer_config.hpp"

#include <nlohmann/json.hpp>

#include <limits>

namespace accel::embed {
namespace {

using nlohmann::json;

std::string child(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}

std::string indexed(std::string_view path, std::size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

// A value as the error shows it: the file is untrusted, so its strings are shown with bad bytes replaced, and
// long values (the vocabulary, say) are cut short.
std::string shown(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr std::size_t kLongest = 80;
  if (text.size() > kLongest) text = text.substr(0, kLongest - 3) + "...";
  return text;
}

Status refused(std::string_view path, const json& value, std::string_view why) {
  return invalid_argument("tokenizer.json: " + std::string(path) + " is " + shown(value) + "; " + std::string(why));
}

Result<const json*> member(const json& parent, std::string_view path, std::string_view key) {
  if (!parent.is_object()) return refused(path.empty() ? "the document" : path, parent, "expected an object");
  const auto found = parent.find(key);
  if (found == parent.end()) return invalid_argument("tokenizer.json: " + child(path, key) + " is missing");
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

Result<std::int32_t> token_id(const json& value, std::string_view path) {
  if (!value.is_number_integer() || value.get<std::int64_t>() < 0 ||
      value.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
    return refused(path, value, "expected a token id (an integer from 0 to 2^31-1)");
  }
  return static_cast<std::int32_t>(value.get<std::int64_t>());
}

// The type a component names, which must be `supported`.
Status check_type(const json& component, std::string_view path, std::string_view supported) {
  ACCEL_ASSIGN_OR_RETURN(const std::string type, string_member(component, path, "type"));
  if (type == supported) return Status();
  return refused(child(path, "type"), type, "only " + std::string(supported) + " is supported");
}

Result<BertNormalizer::Options> parse_normalizer(const json& root) {
  ACCEL_ASSIGN_OR_RETURN(const json* normalizer, member(root, "", "normalizer"));
  ACCEL_RETURN_IF_ERROR(check_type(*normalizer, "normalizer", "BertNormalizer"));
  BertNormalizer::Options options;
  ACCEL_ASSIGN_OR_RETURN(options.clean_text, bool_member(*normalizer, "normalizer", "clean_text"));
  ACCEL_ASSIGN_OR_RETURN(options.handle_chinese_chars, bool_member(*normalizer, "normalizer", "handle_chinese_chars"));
  ACCEL_ASSIGN_OR_RETURN(options.lowercase, bool_member(*normalizer, "normalizer", "lowercase"));
  // `tokenizers`: a null (or absent) strip_accents follows lowercase.
  const auto strip = normalizer->find("strip_accents");
  if (strip == normalizer->end() || strip->is_null()) {
    options.strip_accents = options.lowercase;
  } else {
    ACCEL_ASSIGN_OR_RETURN(options.strip_accents, bool_member(*normalizer, "normalizer", "strip_accents"));
  }
  return options;
}

Status parse_model(const json& root, TokenizerConfig& config) {
  ACCEL_ASSIGN_OR_RETURN(const json* model, member(root, "", "model"));
  ACCEL_RETURN_IF_ERROR(check_type(*model, "model", "WordPiece"));
  ACCEL_ASSIGN_OR_RETURN(config.wordpiece.unk_token, string_member(*model, "model", "unk_token"));
  ACCEL_ASSIGN_OR_RETURN(config.wordpiece.continuing_subword_prefix,
                         string_member(*model, "model", "continuing_subword_prefix"));
  ACCEL_ASSIGN_OR_RETURN(const json* max_chars, member(*model, "model", "max_input_chars_per_word"));
  if (!max_chars->is_number_unsigned()) {
    return refused("model.max_input_chars_per_word", *max_chars, "expected a count");
  }
  config.wordpiece.max_input_chars_per_word = max_chars->get<std::size_t>();
  ACCEL_ASSIGN_OR_RETURN(const json* vocab, member(*model, "model", "vocab"));
  if (!vocab->is_object()) return refused("model.vocab", *vocab, "expected an object of token ids");
  config.vocabulary.reserve(vocab->size());
  for (const auto& [piece, id] : vocab->items()) {
    ACCEL_ASSIGN_OR_RETURN(const std::int32_t checked, token_id(id, "model.vocab[\"" + piece + "\"]"));
    config.vocabulary.emplace_back(piece, checked);
  }
  return Status();
}

Status parse_added_tokens(const json& root, TokenizerConfig& config) {
  ACCEL_ASSIGN_OR_RETURN(const json* tokens, member(root, "", "added_tokens"));
  if (!tokens->is_array()) return refused("added_tokens", *tokens, "expected an array");
  for (std::size_t i = 0; i < tokens->size(); ++i) {
    const json& token = (*tokens)[i];
    const std::string path = indexed("added_tokens", i);
    AddedToken added;
    ACCEL_ASSIGN_OR_RETURN(added.content, string_member(token, path, "content"));
    if (added.content.empty()) return refused(child(path, "content"), token["content"], "expected a token");
    ACCEL_ASSIGN_OR_RETURN(const json* id, member(token, path, "id"));
    ACCEL_ASSIGN_OR_RETURN(added.id, token_id(*id, child(path, "id")));
    // Added tokens that are normalized before matching, or that swallow the whitespace around them, are
    // matched differently; the BERT tokenizers we serve have none.
    for (const char* flag : {"normalized", "single_word", "lstrip", "rstrip"}) {
      ACCEL_ASSIGN_OR_RETURN(const bool set, bool_member(token, path, flag));
      if (set) return refused(child(path, flag), true, "only added tokens matched verbatim are supported");
    }
    config.added_tokens.push_back(std::move(added));
  }
  return Status();
}

// The id of the one-id special token `name` of a TemplateProcessing.
Result<std::int32_t> template_special_id(const json& processor, const json& piece, std::string_view path) {
  ACCEL_ASSIGN_OR_RETURN(const json* special, member(piece, path, "SpecialToken"));
  ACCEL_ASSIGN_OR_RETURN(const std::string name, string_member(*special, child(path, "SpecialToken"), "id"));
  ACCEL_ASSIGN_OR_RETURN(const json* specials, member(processor, "post_processor", "special_tokens"));
  ACCEL_ASSIGN_OR_RETURN(const json* entry, member(*specials, "post_processor.special_tokens", name));
  const std::string entry_path = "post_processor.special_tokens." + name;
  ACCEL_ASSIGN_OR_RETURN(const json* ids, member(*entry, entry_path, "ids"));
  if (!ids->is_array() || ids->size() != 1) {
    return refused(child(entry_path, "ids"), *ids, "only special tokens of one id are supported");
  }
  return token_id((*ids)[0], child(entry_path, "ids") + "[0]");
}

Status parse_post_processor(const json& root, TokenizerConfig& config) {
  ACCEL_ASSIGN_OR_RETURN(const json* processor, member(root, "", "post_processor"));
  ACCEL_ASSIGN_OR_RETURN(const std::string type, string_member(*processor, "post_processor", "type"));
  if (type == "BertProcessing") {
    for (const char* key : {"cls", "sep"}) {
      const std::string path = child("post_processor", key);
      ACCEL_ASSIGN_OR_RETURN(const json* pair, member(*processor, "post_processor", key));
      if (!pair->is_array() || pair->size() != 2) return refused(path, *pair, "expected [token, id]");
      ACCEL_ASSIGN_OR_RETURN(const std::int32_t id, token_id((*pair)[1], path + "[1]"));
      (key == std::string_view("cls") ? config.cls_id : config.sep_id) = id;
    }
    return Status();
  }
  if (type != "TemplateProcessing") {
    return refused("post_processor.type", type, "only TemplateProcessing and BertProcessing are supported");
  }
  // Only the single-sequence template is read: we encode one sequence at a time.
  ACCEL_ASSIGN_OR_RETURN(const json* single, member(*processor, "post_processor", "single"));
  const json* sequence = single->is_array() && single->size() == 3 ? &(*single)[1] : nullptr;
  const bool is_a = sequence != nullptr && sequence->is_object() && sequence->contains("Sequence") &&
                    (*sequence)["Sequence"].is_object() && (*sequence)["Sequence"].value("id", json()) == "A";
  if (!is_a) return refused("post_processor.single", *single, "only [special token, A, special token] is supported");
  ACCEL_ASSIGN_OR_RETURN(config.cls_id, template_special_id(*processor, (*single)[0], "post_processor.single[0]"));
  ACCEL_ASSIGN_OR_RETURN(config.sep_id, template_special_id(*processor, (*single)[2], "post_processor.single[2]"));
  return Status();
}

}  // namespace

Result<TokenizerConfig> TokenizerConfig::parse(std::string_view json_text) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::exception& error) {
    // The parser reports through exceptions; they stop here, and callers see a value.
    return invalid_argument(std::string("tokenizer.json is not valid JSON: ") + error.what());
  }
  ACCEL_ASSIGN_OR_RETURN(const json* pre_tokenizer, member(root, "", "pre_tokenizer"));
  ACCEL_RETURN_IF_ERROR(check_type(*pre_tokenizer, "pre_tokenizer", "BertPreTokenizer"));
  TokenizerConfig config;
  ACCEL_ASSIGN_OR_RETURN(config.normalizer, parse_normalizer(root));
  ACCEL_RETURN_IF_ERROR(parse_model(root, config));
  ACCEL_RETURN_IF_ERROR(parse_added_tokens(root, config));
  ACCEL_RETURN_IF_ERROR(parse_post_processor(root, config));
  return config;
}

}  // namespace accel::embed

#include <nlohmann/json.hpp>

#include "text/tokenizer/bpe.hpp"
#include "text/tokenizer/components.hpp"
#include "text/tokenizer/json_fields.hpp"
#include "text/tokenizer/unigram.hpp"
#include "text/tokenizer/wordpiece.hpp"

namespace accel::text {
namespace {

constexpr std::string_view kSupported = "WordPiece, BPE, Unigram";

// A model without "type" (files written before tokenizers tagged models) is whichever model its fields make it,
// tried in tokenizers' order: BPE (vocab and merges), WordPiece (all of its fields), WordLevel (vocab and
// unk_token), Unigram (vocab as [piece, score] pairs).
Result<std::string> untagged_type(const nlohmann::json& object, std::string_view path) {
  using json_fields::refused;
  if (!object.is_object()) return refused(path, object, "expected an object");
  const auto vocab = object.find("vocab");
  if (vocab == object.end())
    return invalid_argument("tokenizer.json: " + json_fields::child(path, "vocab") + " is missing");
  if (object.contains("merges")) return std::string("BPE");
  if (vocab->is_object()) {
    if (object.contains("continuing_subword_prefix") && object.contains("max_input_chars_per_word")) {
      return std::string("WordPiece");
    }
    if (object.contains("unk_token")) return std::string("WordLevel");
  }
  if (vocab->is_array()) return std::string("Unigram");
  return refused(path, object, "a model without \"type\" must have the fields of one of " + std::string(kSupported));
}

}  // namespace

Result<std::unique_ptr<TokenModel>> make_token_model(const nlohmann::json& object, std::string_view path) {
  std::string type;
  if (object.is_object() && object.contains("type")) {
    ACCEL_ASSIGN_OR_RETURN(type, json_fields::type_of(object, path));
  } else {
    ACCEL_ASSIGN_OR_RETURN(type, untagged_type(object, path));
  }
  if (type == "WordPiece") return make_wordpiece(object, path);
  if (type == "BPE") return make_bpe(object, path);
  if (type == "Unigram") return make_unigram(object, path);
  return json_fields::unsupported_type(path, type, "model", kSupported);
}

std::optional<std::int32_t> Vocabulary::find(std::string_view content) const {
  for (const auto& [added_content, id] : added) {
    if (added_content == content) return id;
  }
  if (model == nullptr) return std::nullopt;
  return model->token_to_id(content);
}

}  // namespace accel::text

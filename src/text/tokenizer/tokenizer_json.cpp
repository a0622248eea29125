// Loading a tokenizer.json: its "added_tokens", "normalizer", "pre_tokenizer", "model", "post_processor" and
// "decoder", each through its stage's factory. A decoder we cannot run does not stop the file loading (decode says
// why instead). "truncation" and "padding" are not read (the caller states truncation in EncodeOptions, and
// nothing is padded).
//
// `tokenizers` does not take an added token's id from the file: it gives the token the id the vocabulary already
// has for its content, or else the next one after the model's vocabulary, in file order. A file whose ids say
// otherwise would be encoded with ids it does not mean, so it is refused.
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <unordered_map>
#include <utility>

#include "accel/text/tokenizer.hpp"
#include "text/tokenizer/json_fields.hpp"
#include "text/tokenizer/pipeline.hpp"

namespace accel::text {
namespace {

using json_fields::child;
using json_fields::indexed;
using json_fields::json;

Result<AddedToken> read_added_token(const json& item, std::string_view path) {
  AddedToken token;
  ACCEL_ASSIGN_OR_RETURN(token.content, json_fields::string_member(item, path, "content"));
  ACCEL_ASSIGN_OR_RETURN(const json* id, json_fields::member(item, path, "id"));
  ACCEL_ASSIGN_OR_RETURN(token.id, json_fields::token_id(*id, child(path, "id")));
  ACCEL_ASSIGN_OR_RETURN(token.special, json_fields::bool_member(item, path, "special"));
  ACCEL_ASSIGN_OR_RETURN(token.normalized, json_fields::bool_member(item, path, "normalized"));
  ACCEL_ASSIGN_OR_RETURN(token.lstrip, json_fields::bool_member(item, path, "lstrip"));
  ACCEL_ASSIGN_OR_RETURN(token.rstrip, json_fields::bool_member(item, path, "rstrip"));
  ACCEL_ASSIGN_OR_RETURN(token.single_word, json_fields::bool_member(item, path, "single_word"));
  return token;
}

// The file's added tokens, with the ids `tokenizers` gives them (see the top of the file).
Result<std::vector<AddedToken>> read_added_tokens(const json& document, const TokenModel& model) {
  ACCEL_ASSIGN_OR_RETURN(const json* list, json_fields::optional_member(document, "", "added_tokens"));
  if (list == nullptr) return std::vector<AddedToken>{};
  if (!list->is_array()) return json_fields::refused("added_tokens", *list, "expected a list of added tokens");

  std::vector<AddedToken> tokens;
  std::unordered_map<std::string, std::size_t> by_content;
  std::size_t next_id = model.vocabulary_size();
  for (std::size_t k = 0; k < list->size(); ++k) {
    const std::string path = indexed("added_tokens", k);
    ACCEL_ASSIGN_OR_RETURN(AddedToken token, read_added_token((*list)[k], path));
    if (token.content.empty()) continue;  // `tokenizers` skips these

    const auto seen = by_content.find(token.content);
    const std::optional<std::int32_t> model_id = model.token_to_id(token.content);
    std::size_t expected = 0;
    std::string why;
    if (seen != by_content.end()) {
      expected = static_cast<std::size_t>(tokens[seen->second].id);
      why = "an earlier added token with this content has the id " + std::to_string(expected);
    } else if (model_id) {
      expected = static_cast<std::size_t>(*model_id);
      why = json(token.content).dump() + " is the model's token " + std::to_string(expected);
    } else {
      expected = next_id++;
      const std::optional<std::string_view> model_token = model.id_to_token(token.id);
      why = model_token ? "the id is the model's token " + json(std::string(*model_token)).dump()
                        : "tokenizers numbers new added tokens from the end of the model's vocabulary: this one is " +
                              std::to_string(expected);
    }
    if (static_cast<std::size_t>(token.id) != expected) return json_fields::refused(child(path, "id"), token.id, why);

    if (seen != by_content.end()) {
      tokens[seen->second] = std::move(token);  // the last one's options hold, as in `tokenizers`
    } else {
      by_content.emplace(token.content, tokens.size());
      tokens.push_back(std::move(token));
    }
  }
  return tokens;
}

// "WordPiece(30522)", "Sequence[NFD,Lowercase]": the component's type and, for a sequence, its parts'.
std::string describe_component(const json* component, const TokenModel* model = nullptr) {
  if (component == nullptr) return "none";
  const auto type = component->find("type");
  std::string text = type != component->end() && type->is_string() ? type->get<std::string>() : "?";
  if (model != nullptr) return text + "(" + std::to_string(model->vocabulary_size()) + ")";
  for (const char* key : {"normalizers", "pretokenizers", "processors"}) {
    const auto parts = component->find(key);
    if (parts == component->end() || !parts->is_array()) continue;
    text += "[";
    for (std::size_t i = 0; i < parts->size(); ++i) {
      if (i > 0) text += ",";
      text += describe_component(&(*parts)[i]);
    }
    text += "]";
  }
  return text;
}

}  // namespace

Result<Tokenizer> Tokenizer::load(const std::filesystem::path& tokenizer_json) {
  std::error_code error;
  if (!std::filesystem::exists(tokenizer_json, error)) {
    return invalid_argument(tokenizer_json.string() + ": no such file");
  }
  std::ifstream in(tokenizer_json, std::ios::binary);
  if (!in) return invalid_argument(tokenizer_json.string() + ": cannot open");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return invalid_argument(tokenizer_json.string() + ": cannot read");
  auto tokenizer = from_json(text);
  if (!tokenizer) return tokenizer.status().with_context(tokenizer_json.string());
  return tokenizer;
}

Result<Tokenizer> Tokenizer::from_json(std::string_view tokenizer_json) {
  const json document = json::parse(tokenizer_json.begin(), tokenizer_json.end(), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return invalid_argument("tokenizer.json: not valid JSON");
  if (!document.is_object()) return json_fields::refused("", document, "expected an object");
  ACCEL_ASSIGN_OR_RETURN(std::string version, json_fields::string_member_or(document, "", "version", "1.0"));
  if (version != "1.0") return json_fields::refused("version", json(version), "expected \"1.0\"");

  auto pipeline = std::make_shared<Pipeline>();
  ACCEL_ASSIGN_OR_RETURN(const json* normalizer, json_fields::optional_member(document, "", "normalizer"));
  if (normalizer != nullptr) {
    ACCEL_ASSIGN_OR_RETURN(pipeline->normalizer, make_normalizer(*normalizer, "normalizer"));
  }
  ACCEL_ASSIGN_OR_RETURN(const json* pre_tokenizer, json_fields::optional_member(document, "", "pre_tokenizer"));
  if (pre_tokenizer != nullptr) {
    ACCEL_ASSIGN_OR_RETURN(pipeline->pre_tokenizer, make_pre_tokenizer(*pre_tokenizer, "pre_tokenizer"));
  }
  ACCEL_ASSIGN_OR_RETURN(const json* model, json_fields::optional_member(document, "", "model"));
  if (model == nullptr) return invalid_argument("tokenizer.json: model is missing");
  ACCEL_ASSIGN_OR_RETURN(pipeline->model, make_token_model(*model, "model"));

  ACCEL_ASSIGN_OR_RETURN(std::vector<AddedToken> added, read_added_tokens(document, *pipeline->model));
  Vocabulary vocabulary{.model = pipeline->model.get(), .added = {}};
  for (const AddedToken& token : added) vocabulary.added.emplace_back(token.content, token.id);
  const std::size_t added_count = added.size();
  pipeline->added_vocabulary = AddedVocabulary(std::move(added), pipeline->normalizer.get());

  ACCEL_ASSIGN_OR_RETURN(const json* post_processor, json_fields::optional_member(document, "", "post_processor"));
  if (post_processor != nullptr) {
    ACCEL_ASSIGN_OR_RETURN(pipeline->post_processor,
                           make_post_processor(*post_processor, "post_processor", vocabulary));
  }

  ACCEL_ASSIGN_OR_RETURN(const json* decoder, json_fields::optional_member(document, "", "decoder"));
  if (decoder != nullptr) {
    Result<std::unique_ptr<Decoder>> made = make_decoder(*decoder, "decoder");
    if (made.ok()) {
      pipeline->decoder = std::move(*made);
    } else {
      pipeline->decoder_refusal = made.status();
    }
  }

  pipeline->description =
      "normalizer=" + describe_component(normalizer) + " pre_tokenizer=" + describe_component(pre_tokenizer) +
      " model=" + describe_component(model, pipeline->model.get()) +
      " post_processor=" + describe_component(post_processor) + " added_tokens=" + std::to_string(added_count);
  return Tokenizer(std::move(pipeline));
}

}  // namespace accel::text

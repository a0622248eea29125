#include "embed/model_folder.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace accel::embed {
namespace {

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

// A field of a JSON object with the file it came from, so that every refusal names both.
class Fields {
 public:
  Fields(const json& object, const std::filesystem::path& file) : object_(object), file_(file) {}

  [[nodiscard]] bool has(std::string_view field) const { return object_.contains(field); }

  [[nodiscard]] Result<std::uint32_t> u32(std::string_view field, std::uint32_t minimum) const {
    ACCEL_ASSIGN_OR_RETURN(const json* value, get(field));
    if (!value->is_number_unsigned() || value->get<std::uint64_t>() < minimum ||
        value->get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max())
      return error(field, fmt::format("{} is not an integer in [{}, 2^32)", value->dump(), minimum));
    return static_cast<std::uint32_t>(value->get<std::uint64_t>());
  }
  [[nodiscard]] Result<std::uint32_t> u32_or(std::string_view field, std::uint32_t fallback) const {
    return has(field) ? u32(field, 0) : Result<std::uint32_t>(fallback);
  }
  [[nodiscard]] Result<double> positive(std::string_view field) const {
    ACCEL_ASSIGN_OR_RETURN(const json* value, get(field));
    if (!value->is_number() || !std::isfinite(value->get<double>()) || value->get<double>() <= 0)
      return error(field, fmt::format("{} is not a positive number", value->dump()));
    return value->get<double>();
  }
  [[nodiscard]] Result<std::string> string(std::string_view field) const {
    ACCEL_ASSIGN_OR_RETURN(const json* value, get(field));
    if (!value->is_string()) return error(field, fmt::format("{} is not a string", value->dump()));
    return value->get<std::string>();
  }
  [[nodiscard]] Result<std::string> string_or(std::string_view field, std::string fallback) const {
    return has(field) ? string(field) : Result<std::string>(std::move(fallback));
  }
  [[nodiscard]] Result<bool> boolean_or(std::string_view field, bool fallback) const {
    if (!has(field)) return fallback;
    ACCEL_ASSIGN_OR_RETURN(const json* value, get(field));
    if (!value->is_boolean()) return error(field, fmt::format("{} is not true or false", value->dump()));
    return value->get<bool>();
  }

  [[nodiscard]] Status error(std::string_view field, std::string_view what) const {
    return field_error(file_, field, what);
  }

 private:
  [[nodiscard]] Result<const json*> get(std::string_view field) const {
    const auto found = object_.find(field);
    if (found == object_.end()) return error(field, "missing");
    return &*found;
  }

  const json& object_;
  const std::filesystem::path& file_;
};

Result<BertConfig> read_config(const std::filesystem::path& file) {
  ACCEL_ASSIGN_OR_RETURN(const json document, read_object(file));
  const Fields fields(document, file);
  // Only "bert": its relatives change what the encoder computes (RoBERTa offsets positions past the padding
  // id, DistilBERT has no token types and other weight names, ELECTRA projects its embeddings), so accepting
  // them here would load weights the encoder then misreads.
  ACCEL_ASSIGN_OR_RETURN(const std::string model_type, fields.string("model_type"));
  if (model_type != "bert")
    return fields.error("model_type", fmt::format("'{}' is not supported (only 'bert')", model_type));
  ACCEL_ASSIGN_OR_RETURN(const std::string position, fields.string_or("position_embedding_type", "absolute"));
  if (position != "absolute")
    return fields.error("position_embedding_type", fmt::format("'{}' is not supported (only 'absolute')", position));

  BertConfig config;
  ACCEL_ASSIGN_OR_RETURN(config.hidden_size, fields.u32("hidden_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.num_attention_heads, fields.u32("num_attention_heads", 1));
  ACCEL_ASSIGN_OR_RETURN(config.num_hidden_layers, fields.u32("num_hidden_layers", 1));
  ACCEL_ASSIGN_OR_RETURN(config.intermediate_size, fields.u32("intermediate_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.max_position_embeddings, fields.u32("max_position_embeddings", 1));
  ACCEL_ASSIGN_OR_RETURN(config.vocab_size, fields.u32("vocab_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.type_vocab_size, fields.u32("type_vocab_size", 1));
  ACCEL_ASSIGN_OR_RETURN(config.layer_norm_eps, fields.positive("layer_norm_eps"));
  // transformers' BertConfig default; checkpoints written before the field existed omit it.
  ACCEL_ASSIGN_OR_RETURN(config.pad_token_id, fields.u32_or("pad_token_id", 0));
  if (config.hidden_size % config.num_attention_heads != 0)
    return fields.error("num_attention_heads", fmt::format("{} does not divide hidden_size {}",
                                                           config.num_attention_heads, config.hidden_size));
  if (config.pad_token_id >= config.vocab_size)
    return fields.error("pad_token_id",
                        fmt::format("{} is outside the vocabulary of {}", config.pad_token_id, config.vocab_size));

  ACCEL_ASSIGN_OR_RETURN(const std::string act, fields.string("hidden_act"));
  if (act == "gelu")
    config.hidden_act = Gelu::erf;
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh")
    config.hidden_act = Gelu::tanh;
  else
    return fields.error("hidden_act", fmt::format("'{}' is not supported (gelu, gelu_new or gelu_pytorch_tanh)", act));
  return config;
}

// The module folders modules.json names, in order: the Transformer's and the Pooling's.
struct Modules {
  std::filesystem::path transformer;
  std::filesystem::path pooling;
  bool normalize = false;
};

Result<Modules> read_modules(const std::filesystem::path& folder) {
  const std::filesystem::path file = folder / "modules.json";
  ACCEL_ASSIGN_OR_RETURN(const json document, read_json(file));
  static constexpr std::string_view kExpected[] = {"Transformer", "Pooling", "Normalize"};
  if (!document.is_array() || document.size() < 2 || document.size() > 3)
    return file_error(file, "is not a list of a Transformer, a Pooling and optionally a Normalize module");
  Modules modules;
  for (std::size_t i = 0; i < document.size(); ++i) {
    const std::string where = fmt::format("[{}]", i);
    if (!document[i].is_object()) return field_error(file, where, "is not an object");
    const Fields fields(document[i], file);
    ACCEL_ASSIGN_OR_RETURN(const std::string type, fields.string("type"));
    // The class's module path moves between sentence-transformers versions; its name does not.
    const std::string_view name = std::string_view(type).substr(type.rfind('.') + 1);
    if (!type.starts_with("sentence_transformers.") || name != kExpected[i])
      return field_error(file, where + ".type",
                         fmt::format("'{}' where a {} was expected (supported: Transformer, Pooling, optional "
                                     "Normalize, in that order)",
                                     type, kExpected[i]));
    if (i == 2) {
      modules.normalize = true;
      continue;
    }
    ACCEL_ASSIGN_OR_RETURN(const std::string path, fields.string("path"));
    const std::filesystem::path relative(path);
    for (const auto& part : relative)
      if (part == "..") return field_error(file, where + ".path", fmt::format("'{}' leaves the folder", path));
    if (relative.is_absolute())
      return field_error(file, where + ".path", fmt::format("'{}' is not inside the folder", path));
    (i == 0 ? modules.transformer : modules.pooling) = folder / relative;
  }
  return modules;
}

Status check_pooling(const std::filesystem::path& module, const BertConfig& config) {
  const std::filesystem::path file = module / "config.json";
  ACCEL_ASSIGN_OR_RETURN(const json document, read_object(file));
  const Fields fields(document, file);
  ACCEL_ASSIGN_OR_RETURN(const std::uint32_t dimension, fields.u32("word_embedding_dimension", 1));
  if (dimension != config.hidden_size)
    return fields.error("word_embedding_dimension",
                        fmt::format("{} is not the encoder's hidden_size {}", dimension, config.hidden_size));
  ACCEL_ASSIGN_OR_RETURN(const bool mean, fields.boolean_or("pooling_mode_mean_tokens", false));
  if (!mean) return fields.error("pooling_mode_mean_tokens", "is not true (only mean pooling is supported)");
  for (const auto& [key, value] : document.items()) {
    if (!key.starts_with("pooling_mode_") || key == "pooling_mode_mean_tokens") continue;
    ACCEL_ASSIGN_OR_RETURN(const bool on, fields.boolean_or(key, false));
    if (on) return fields.error(key, "is true, but only pooling_mode_mean_tokens is supported");
  }
  return Status();
}

Result<std::filesystem::path> model_file(const std::filesystem::path& module, std::string_view name,
                                         std::string_view what) {
  std::filesystem::path path = module / name;
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error)) return path;
  if (name == "model.safetensors" && std::filesystem::exists(module / "pytorch_model.bin", error))
    return file_error(path, "missing: only safetensors weights are read, not pytorch_model.bin");
  return file_error(path, fmt::format("missing ({})", what));
}

}  // namespace

Result<ModelFolder> ModelFolder::read(const std::filesystem::path& folder) {
  ACCEL_ASSIGN_OR_RETURN(const Modules modules, read_modules(folder));
  ModelFolder model;
  model.folder = folder;
  model.normalize = modules.normalize;
  ACCEL_ASSIGN_OR_RETURN(model.config, read_config(modules.transformer / "config.json"));

  const std::filesystem::path st_file = modules.transformer / "sentence_bert_config.json";
  ACCEL_ASSIGN_OR_RETURN(const json st_config, read_object(st_file));
  const Fields st_fields(st_config, st_file);
  ACCEL_ASSIGN_OR_RETURN(model.max_seq_length, st_fields.u32("max_seq_length", 1));
  // sentence-transformers' default: the tokenizer's own normaliser decides about case.
  ACCEL_ASSIGN_OR_RETURN(model.do_lower_case, st_fields.boolean_or("do_lower_case", false));

  ACCEL_RETURN_IF_ERROR(check_pooling(modules.pooling, model.config));
  ACCEL_ASSIGN_OR_RETURN(model.tokenizer_json, model_file(modules.transformer, "tokenizer.json", "the tokenizer"));
  ACCEL_ASSIGN_OR_RETURN(model.weights, model_file(modules.transformer, "model.safetensors", "the weights"));
  return model;
}

}  // namespace accel::embed

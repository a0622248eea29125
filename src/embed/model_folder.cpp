#include "embed/model_folder.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace accel::embed {
namespace {

using nlohmann::json;

Result<std::filesystem::path> model_file(const std::filesystem::path& module, std::string_view name,
                                         std::string_view what) {
  std::filesystem::path path = module / name;
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error)) return path;
  if (name == "model.safetensors" && std::filesystem::exists(module / "pytorch_model.bin", error))
    return file_error(path, "missing: only safetensors weights are read, not pytorch_model.bin");
  return file_error(path, fmt::format("missing ({})", what));
}

bool has_architecture(const EncoderConfig& config, std::string_view suffix) {
  return std::ranges::any_of(config.architectures, [&](const std::string& name) { return name.ends_with(suffix); });
}

// vLLM's classifier_from_token: a decoder whose lm_head rows of two tokens make a reranker (model_folder.hpp).
Status read_yes_no(const Fields& fields, ModelFolder& model) {
  if (!fields.has("classifier_from_token")) return Status();
  const nlohmann::json& tokens = fields.object().at("classifier_from_token");
  if (!tokens.is_array() || tokens.size() != 2 || !tokens[0].is_string() || !tokens[1].is_string())
    return fields.error(
        "classifier_from_token",
        fmt::format("is {}, not two tokens [\"no\", \"yes\"] (negative, then positive)", tokens.dump()));
  if (!model.config.decoder)
    return fields.error(
        "classifier_from_token",
        fmt::format("is only read for a decoder (Qwen2, Qwen3), not the {} family", model.family->name));
  YesNoReranker yes_no{.no_token = tokens[0].get<std::string>(), .yes_token = tokens[1].get<std::string>()};
  ACCEL_ASSIGN_OR_RETURN(yes_no.tied, fields.boolean_or("tie_word_embeddings", false));
  model.yes_no = std::move(yes_no);
  model.head = Head::classifier;
  model.config.num_labels = 1;
  model.config.labels = {model.yes_no->yes_token};
  return Status();
}

Status read_config(const std::filesystem::path& file, ModelFolder& model) {
  ACCEL_ASSIGN_OR_RETURN(const json document, read_object(file));
  const Fields fields(document, file);
  ACCEL_ASSIGN_OR_RETURN(const std::string model_type, fields.string("model_type"));
  model.family = find_family(model_type);
  if (model.family == nullptr)
    return fields.error("model_type",
                        fmt::format("'{}' is not supported (supported: {})", model_type, supported_model_types()));
  ACCEL_ASSIGN_OR_RETURN(model.config, model.family->read_config(fields));
  return read_yes_no(fields, model);
}

// Where sentence-transformers 6 (and a bare checkpoint's tokenizer) keeps the longest input: tokenizer_config.json's
// model_max_length, when it is there and is not the "no limit" value transformers writes (about 1e30).
Result<std::uint32_t> tokenizer_max_length(const std::filesystem::path& transformer, std::uint32_t positions) {
  const std::filesystem::path file = transformer / "tokenizer_config.json";
  std::error_code error;
  if (!std::filesystem::exists(file, error)) return positions;
  ACCEL_ASSIGN_OR_RETURN(const json document, read_object(file));
  const auto found = document.find("model_max_length");
  if (found == document.end() || !found->is_number_unsigned() || found->get<std::uint64_t>() == 0 ||
      found->get<std::uint64_t>() >= positions)
    return positions;
  return static_cast<std::uint32_t>(found->get<std::uint64_t>());
}

// The longest input: sentence_bert_config.json's max_seq_length (sentence-transformers before 6), else the
// tokenizer's model_max_length, else the position table's length.
Status read_sentence_bert_config(const std::filesystem::path& transformer, ModelFolder& model) {
  const std::filesystem::path file = transformer / "sentence_bert_config.json";
  ACCEL_ASSIGN_OR_RETURN(model.max_seq_length, tokenizer_max_length(transformer, model.config.positions()));
  std::error_code error;
  if (!std::filesystem::exists(file, error)) return Status();
  ACCEL_ASSIGN_OR_RETURN(const json document, read_object(file));
  const Fields fields(document, file);
  ACCEL_ASSIGN_OR_RETURN(model.max_seq_length, fields.u32_or("max_seq_length", model.max_seq_length));
  if (model.max_seq_length == 0) return fields.error("max_seq_length", "is 0");
  ACCEL_ASSIGN_OR_RETURN(model.do_lower_case, fields.boolean_or("do_lower_case", false));
  return Status();
}

Status check_modules(const SentenceTransformersModules& modules, const ModelFolder& model) {
  if (model.head != Head::embedding || !modules.pooled) return Status();
  if (modules.pooled_width != model.config.hidden_size)
    return field_error(
        modules.pooling_file, "word_embedding_dimension",
        fmt::format("{} is not the encoder's hidden size {}", modules.pooled_width, model.config.hidden_size));
  std::uint32_t width = model.config.hidden_size;
  for (std::size_t i = 0; i < model.dense.size(); ++i) {
    if (model.dense[i].in_features != width)
      return field_error(model.dense[i].weights.parent_path() / "config.json", "in_features",
                         fmt::format("{} is not the width before it, {}", model.dense[i].in_features, width));
    width = model.dense[i].out_features;
  }
  return Status();
}

}  // namespace

std::string_view to_string(Head head) noexcept {
  switch (head) {
    case Head::embedding: return "embedding";
    case Head::classifier: return "classifier";
    case Head::splade: return "splade";
  }
  return "unknown";
}

std::uint32_t ModelFolder::output_dimensions() const noexcept {
  switch (head) {
    case Head::embedding: return dense.empty() ? config.hidden_size : dense.back().out_features;
    case Head::classifier: return config.num_labels;
    case Head::splade: return config.vocab_size;
  }
  return 0;
}

Result<ModelFolder> ModelFolder::read(const std::filesystem::path& folder) {
  ModelFolder model;
  model.folder = folder;
  std::error_code error;
  SentenceTransformersModules modules{.transformer = folder};
  const bool sentence_transformers = std::filesystem::exists(folder / "modules.json", error);
  if (sentence_transformers) {
    ACCEL_ASSIGN_OR_RETURN(modules, read_sentence_transformers_modules(folder, model));
  }
  ACCEL_RETURN_IF_ERROR(read_config(modules.transformer / "config.json", model));
  if (model.yes_no && modules.pooled)
    return field_error(modules.transformer / "config.json", "classifier_from_token",
                       "makes a yes/no reranker, but modules.json pools the model into an embedding: which is it?");
  // A Transformer with nothing after it is a model whose head is its own: a cross-encoder or a masked LM.
  if (!modules.pooled && !model.yes_no) {
    if (has_architecture(model.config, "ForSequenceClassification"))
      model.head = Head::classifier;
    else if (has_architecture(model.config, "ForMaskedLM"))
      model.head = Head::splade;
  }
  // A decoder's bare checkpoint embeds by its last token, the one that has seen the whole text.
  if (!modules.pooled && model.head == Head::embedding && model.config.decoder) model.pooling = graph::PoolMode::last;
  if ((model.head == Head::classifier && model.family->classifier_names == nullptr && !model.yes_no) ||
      (model.head == Head::splade && model.family->masked_lm_names == nullptr))
    return field_error(
        modules.transformer / "config.json", "architectures",
        fmt::format("a {} head is not supported for the {} family (only embeddings{})", to_string(model.head),
                    model.family->name,
                    model.config.decoder ? ", or a yes/no reranker: config.json's classifier_from_token" : ""));
  ACCEL_RETURN_IF_ERROR(check_modules(modules, model));
  ACCEL_RETURN_IF_ERROR(read_sentence_bert_config(modules.transformer, model));
  // The model card scores pairs of at most 8192 tokens (its max_length), far below Qwen3's 40960 positions.
  if (model.yes_no) model.max_seq_length = std::min(model.max_seq_length, kYesNoMaxLength);
  ACCEL_RETURN_IF_ERROR(read_prompts(folder, model));
  ACCEL_ASSIGN_OR_RETURN(model.tokenizer_json, model_file(modules.transformer, "tokenizer.json", "the tokenizer"));
  ACCEL_ASSIGN_OR_RETURN(model.weights, model_file(modules.transformer, "model.safetensors", "the weights"));
  return model;
}

}  // namespace accel::embed

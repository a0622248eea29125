// modules.json and the files of the modules it names. A module is known by its class name, whatever module path
// the sentence-transformers version that wrote the folder gave it.
#include <fmt/format.h>

#include <string_view>

#include "embed/model_folder.hpp"

namespace accel::embed {
namespace {

using nlohmann::json;

constexpr std::string_view kKnownModules =
    "Transformer, Pooling, Dense and Normalize, or MLMTransformer and SpladePooling";

Result<graph::PoolMode> pool_mode_named(const Fields& fields, std::string_view field, std::string_view name) {
  if (name == "cls") return graph::PoolMode::first;
  if (name == "mean") return graph::PoolMode::mean;
  if (name == "max") return graph::PoolMode::max;
  if (name == "lasttoken") return graph::PoolMode::last;
  if (name == "mean_sqrt_len_tokens") return graph::PoolMode::mean_sqrt_length;
  if (name == "weightedmean") return graph::PoolMode::weighted_mean;
  return fields.error(field, fmt::format("'{}' is not a pooling mode (cls, mean, max, lasttoken, "
                                         "mean_sqrt_len_tokens or weightedmean)",
                                         name));
}

// The older form: one boolean per mode, exactly one of them true.
constexpr std::pair<std::string_view, std::string_view> kPoolingFlags[] = {
    {"pooling_mode_cls_token", "cls"},
    {"pooling_mode_mean_tokens", "mean"},
    {"pooling_mode_max_tokens", "max"},
    {"pooling_mode_lasttoken", "lasttoken"},
    {"pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens"},
    {"pooling_mode_weightedmean_tokens", "weightedmean"},
};

Status read_pooling(const std::filesystem::path& module, ModelFolder& model, std::uint32_t& width) {
  const std::filesystem::path file = module / "config.json";
  ACCEL_ASSIGN_OR_RETURN(const json document, read_object(file));
  const Fields fields(document, file);
  // sentence-transformers 6 renamed the field.
  ACCEL_ASSIGN_OR_RETURN(
      width, fields.u32(fields.has("embedding_dimension") ? "embedding_dimension" : "word_embedding_dimension", 1));
  ACCEL_ASSIGN_OR_RETURN(const bool include_prompt, fields.boolean_or("include_prompt", true));
  if (!include_prompt)
    return fields.error("include_prompt", "is false: pooling without the prompt's tokens is not supported");
  if (fields.has("pooling_mode") && !document.at("pooling_mode").is_null()) {
    ACCEL_ASSIGN_OR_RETURN(const std::string name, fields.string("pooling_mode"));
    ACCEL_ASSIGN_OR_RETURN(model.pooling, pool_mode_named(fields, "pooling_mode", name));
    return Status();
  }
  std::string chosen;
  for (const auto& [flag, name] : kPoolingFlags) {
    ACCEL_ASSIGN_OR_RETURN(const bool on, fields.boolean_or(flag, false));
    if (!on) continue;
    if (!chosen.empty())
      return fields.error(
          flag, fmt::format("is true as well as the {} mode: concatenated poolings are not supported", chosen));
    chosen = name;
  }
  if (chosen.empty()) return fields.error("pooling_mode_mean_tokens", "no pooling mode is true");
  ACCEL_ASSIGN_OR_RETURN(model.pooling, pool_mode_named(fields, "pooling_mode", chosen));
  return Status();
}

Status read_splade_pooling(const std::filesystem::path& module) {
  const std::filesystem::path file = module / "config.json";
  ACCEL_ASSIGN_OR_RETURN(const json document, read_object(file));
  const Fields fields(document, file);
  ACCEL_ASSIGN_OR_RETURN(const std::string strategy, fields.string_or("pooling_strategy", "max"));
  if (strategy != "max")
    return fields.error("pooling_strategy", fmt::format("'{}' is not supported (only 'max')", strategy));
  ACCEL_ASSIGN_OR_RETURN(const std::string activation, fields.string_or("activation_function", "relu"));
  if (activation != "relu")
    return fields.error("activation_function", fmt::format("'{}' is not supported (only 'relu')", activation));
  return Status();
}

// torch.nn's activation modules a Dense names by class path.
Result<Activation> dense_activation(const Fields& fields, std::string_view path) {
  const std::string_view name = path.substr(path.rfind('.') + 1);
  if (name == "Identity") return Activation::identity;
  if (name == "Tanh") return Activation::tanh;
  if (name == "ReLU") return Activation::relu;
  if (name == "GELU") return Activation::gelu_erf;
  if (name == "Sigmoid") return Activation::sigmoid;
  if (name == "SiLU") return Activation::silu;
  return fields.error("activation_function",
                      fmt::format("'{}' is not supported (Identity, Tanh, ReLU, GELU, Sigmoid or SiLU)", path));
}

Result<DenseModule> read_dense(const std::filesystem::path& module) {
  const std::filesystem::path file = module / "config.json";
  ACCEL_ASSIGN_OR_RETURN(const json document, read_object(file));
  const Fields fields(document, file);
  DenseModule dense;
  ACCEL_ASSIGN_OR_RETURN(dense.in_features, fields.u32("in_features", 1));
  ACCEL_ASSIGN_OR_RETURN(dense.out_features, fields.u32("out_features", 1));
  ACCEL_ASSIGN_OR_RETURN(dense.bias, fields.boolean_or("bias", true));
  ACCEL_ASSIGN_OR_RETURN(const std::string activation,
                         fields.string_or("activation_function", "torch.nn.modules.activation.Tanh"));
  ACCEL_ASSIGN_OR_RETURN(dense.activation, dense_activation(fields, activation));
  dense.weights = module / "model.safetensors";
  std::error_code error;
  if (!std::filesystem::is_regular_file(dense.weights, error))
    return file_error(dense.weights, std::filesystem::exists(module / "pytorch_model.bin", error)
                                         ? "missing: only safetensors weights are read, not pytorch_model.bin"
                                         : "missing (the Dense module's weights)");
  return dense;
}

Result<std::filesystem::path> module_path(const Fields& fields, const std::string& where,
                                          const std::filesystem::path& folder) {
  ACCEL_ASSIGN_OR_RETURN(const std::string path, fields.string_or("path", ""));
  const std::filesystem::path relative(path);
  for (const auto& part : relative)
    if (part == "..") return field_error(fields.file(), where + ".path", fmt::format("'{}' leaves the folder", path));
  if (relative.is_absolute())
    return field_error(fields.file(), where + ".path", fmt::format("'{}' is not inside the folder", path));
  return folder / relative;
}

}  // namespace

Result<SentenceTransformersModules> read_sentence_transformers_modules(const std::filesystem::path& folder,
                                                                       ModelFolder& model) {
  const std::filesystem::path file = folder / "modules.json";
  ACCEL_ASSIGN_OR_RETURN(const json document, read_json(file));
  if (!document.is_array() || document.empty())
    return file_error(file, fmt::format("is not a list of modules ({})", kKnownModules));
  SentenceTransformersModules modules;
  // What may come next: the module names accepted at this point, in order.
  enum class Stage { first, after_transformer, after_pooling, after_normalize, after_splade };
  Stage stage = Stage::first;
  for (std::size_t i = 0; i < document.size(); ++i) {
    const std::string where = fmt::format("[{}]", i);
    if (!document[i].is_object()) return field_error(file, where, "is not an object");
    const Fields fields(document[i], file);
    ACCEL_ASSIGN_OR_RETURN(const std::string type, fields.string("type"));
    const std::string_view name = std::string_view(type).substr(type.rfind('.') + 1);
    const auto misplaced = [&](std::string_view expected) {
      return field_error(file, where + ".type",
                         fmt::format("'{}' where {} was expected (supported: {})", type, expected, kKnownModules));
    };
    if (!type.starts_with("sentence_transformers.")) return misplaced("a sentence_transformers module");
    ACCEL_ASSIGN_OR_RETURN(const std::filesystem::path path, module_path(fields, where, folder));
    switch (stage) {
      case Stage::first:
        if (name != "Transformer" && name != "MLMTransformer") return misplaced("a Transformer or an MLMTransformer");
        modules.transformer = path;
        model.head = name == "Transformer" ? Head::embedding : Head::splade;
        stage = Stage::after_transformer;
        break;
      case Stage::after_transformer:
        if (model.head == Head::splade) {
          if (name != "SpladePooling") return misplaced("a SpladePooling");
          ACCEL_RETURN_IF_ERROR(read_splade_pooling(path));
          stage = Stage::after_splade;
          break;
        }
        if (name != "Pooling") return misplaced("a Pooling");
        modules.pooling_file = path / "config.json";
        ACCEL_RETURN_IF_ERROR(read_pooling(path, model, modules.pooled_width));
        stage = Stage::after_pooling;
        break;
      case Stage::after_pooling:
        if (name == "Dense") {
          ACCEL_ASSIGN_OR_RETURN(DenseModule dense, read_dense(path));
          model.dense.push_back(std::move(dense));
        } else if (name == "Normalize") {
          model.normalize = true;
          stage = Stage::after_normalize;
        } else {
          return misplaced("a Dense or a Normalize");
        }
        break;
      case Stage::after_normalize:
      case Stage::after_splade: return misplaced("nothing more");
    }
  }
  modules.pooled = stage != Stage::after_transformer;
  return modules;
}

Status read_prompts(const std::filesystem::path& folder, ModelFolder& model) {
  const std::filesystem::path file = folder / "config_sentence_transformers.json";
  std::error_code error;
  if (!std::filesystem::exists(file, error)) return Status();
  ACCEL_ASSIGN_OR_RETURN(const json document, read_object(file));
  const Fields fields(document, file);
  if (fields.has("prompts") && !document.at("prompts").is_null()) {
    const json& prompts = document.at("prompts");
    if (!prompts.is_object()) return fields.error("prompts", "is not an object of prompt texts by name");
    for (const auto& [name, text] : prompts.items()) {
      if (!text.is_string()) return fields.error("prompts." + name, fmt::format("{} is not a string", text.dump()));
      model.prompts.emplace(name, text.get<std::string>());
    }
  }
  ACCEL_ASSIGN_OR_RETURN(model.default_prompt_name, fields.string_or("default_prompt_name", ""));
  if (!model.default_prompt_name.empty() && !model.prompts.contains(model.default_prompt_name))
    return fields.error("default_prompt_name",
                        fmt::format("'{}' is not one of the prompts", model.default_prompt_name));
  return Status();
}

}  // namespace accel::embed

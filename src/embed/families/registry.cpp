// The registry of families, and what reading their config.json shares.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

#include "embed/families/families.hpp"

namespace accel::embed {
namespace {

constexpr const Family* kFamilies[] = {&kBertFamily,  &kRobertaFamily,    &kDistilbertFamily, &kQwen3Family,
                                       &kQwen2Family, &kModernBertFamily, &kNomicBertFamily,  &kGteFamily};

}  // namespace

const Family* find_family(std::string_view model_type) noexcept {
  for (const Family* family : kFamilies)
    if (std::ranges::find(family->model_types, model_type) != family->model_types.end()) return family;
  return nullptr;
}

std::string supported_model_types() {
  std::vector<std::string_view> types;
  for (const Family* family : kFamilies)
    types.insert(types.end(), family->model_types.begin(), family->model_types.end());
  return fmt::format("{}", fmt::join(types, ", "));
}

Result<EncoderConfig> read_common_config(const Fields& fields) {
  EncoderConfig config;
  ACCEL_ASSIGN_OR_RETURN(config.model_type, fields.string("model_type"));
  if (fields.has("architectures")) {
    const nlohmann::json& list = fields.object().at("architectures");
    if (!list.is_array() && !list.is_null()) return fields.error("architectures", "is not a list of class names");
    for (const nlohmann::json& name : list.is_array() ? list : nlohmann::json::array()) {
      if (!name.is_string()) return fields.error("architectures", fmt::format("{} is not a class name", name.dump()));
      config.architectures.push_back(name.get<std::string>());
    }
  }
  // transformers takes the number of labels from id2label when it is there, else from num_labels (default 2).
  if (fields.has("id2label") && fields.object().at("id2label").is_object()) {
    config.num_labels = static_cast<std::uint32_t>(fields.object().at("id2label").size());
    if (config.num_labels == 0) return fields.error("id2label", "is empty");
  } else {
    ACCEL_ASSIGN_OR_RETURN(config.num_labels, fields.u32_or("num_labels", 2));
    if (config.num_labels == 0) return fields.error("num_labels", "is 0");
  }
  for (std::uint32_t i = 0; i < config.num_labels; ++i) config.labels.push_back(fmt::format("LABEL_{}", i));
  if (fields.has("id2label") && fields.object().at("id2label").is_object()) {
    for (const auto& [key, name] : fields.object().at("id2label").items()) {
      std::uint32_t index = 0;
      const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), index);
      if (error != std::errc{} || end != key.data() + key.size() || index >= config.num_labels || !name.is_string())
        return fields.error("id2label", fmt::format("\"{}\": {} is not a label of an output below {}", key, name.dump(),
                                                    config.num_labels));
      config.labels[index] = name.get<std::string>();
    }
  }
  return config;
}

Result<Activation> read_activation(const Fields& fields, std::string_view field) {
  ACCEL_ASSIGN_OR_RETURN(const std::string name, fields.string(field));
  if (name == "gelu") return Activation::gelu_erf;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::gelu_tanh;
  if (name == "relu") return Activation::relu;
  if (name == "silu" || name == "swish") return Activation::silu;
  return fields.error(field,
                      fmt::format("'{}' is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu or silu)", name));
}

Status check_encoder_config(const Fields& fields, const EncoderConfig& config, std::string_view heads_field,
                            std::string_view hidden_field) {
  if (config.hidden_size % config.num_attention_heads != 0)
    return fields.error(heads_field, fmt::format("{} does not divide {} {}", config.num_attention_heads, hidden_field,
                                                 config.hidden_size));
  if (config.pad_token_id >= config.vocab_size)
    return fields.error("pad_token_id",
                        fmt::format("{} is outside the vocabulary of {}", config.pad_token_id, config.vocab_size));
  return Status();
}

Status check_rotary_head_dim(const Fields& fields, const EncoderConfig& config, std::string_view heads_field) {
  if (config.head_dim % 2 == 0 && config.head_dim <= 128) return Status();
  return fields.error(heads_field, fmt::format("gives heads of {} columns; rotary attention here takes even widths up "
                                               "to 128",
                                               config.head_dim));
}

}  // namespace accel::embed

#include "cli/serve_model_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "cli/device_choice.hpp"

namespace accel::cli {
namespace {

// Which of `values` model `index` takes: none when the option was not given, the one value when given once, else
// the value at its position. The counts were checked before.
template <class T>
std::optional<T> value_for(const std::vector<T>& values, std::size_t index) {
  if (values.empty()) return std::nullopt;
  return values.size() == 1 ? values.front() : values[index];
}

Status check_count(std::string_view option, std::size_t given, std::size_t models) {
  if (given <= 1 || given == models) return {};
  return invalid_argument(
      fmt::format("{} is given {} times for {} --model: give it once (for every model) or once "
                  "per --model, in the models' order",
                  option, given, models));
}

}  // namespace

Result<std::vector<serve::ModelServeOptions>> model_serve_options(std::size_t models, const PerModelArguments& given) {
  const std::pair<std::string_view, std::size_t> counts[] = {
      {"--served-model-name", given.served_names.size()},
      {"--batch-tokens", given.batch_tokens.size()},
      {"--max-batch-requests", given.max_batch_requests.size()},
      {"--auto-truncate", given.auto_truncate.size()},
      {"--default-prompt-name", given.default_prompt_names.size()},
      {"--default-prompt", given.default_prompts.size()},
      {"--dtype", given.dtypes.size()},
  };
  for (const auto& [option, count] : counts)
    if (Status counted = check_count(option, count, models); !counted.ok()) return counted;
  if (models > 1 && given.served_names.size() == 1)
    return invalid_argument(
        fmt::format("--served-model-name is given once for {} --model: every model needs a name "
                    "of its own (give it once per --model)",
                    models));
  for (std::size_t i = 0; i < given.served_names.size(); ++i) {
    if (given.served_names[i].empty()) return invalid_argument("--served-model-name is empty");
    if (std::count(given.served_names.begin(), given.served_names.end(), given.served_names[i]) > 1)
      return invalid_argument(
          fmt::format("--served-model-name '{}' is given twice: a request could not choose", given.served_names[i]));
  }
  for (const std::string& value : given.auto_truncate)
    if (value != "true" && value != "false")
      return invalid_argument(fmt::format("--auto-truncate={}: it is true or false", value));

  std::vector<std::optional<DType>> computes;
  for (const std::string& value : given.dtypes) {
    ACCEL_ASSIGN_OR_RETURN(std::optional<DType> compute, compute_dtype(value));
    computes.push_back(compute);
  }

  std::vector<serve::ModelServeOptions> options(models);
  for (std::size_t i = 0; i < models; ++i) {
    serve::ModelServeOptions& model = options[i];
    model.name = value_for(given.served_names, i).value_or("");
    model.batch_tokens = value_for(given.batch_tokens, i);
    model.max_batch_requests = value_for(given.max_batch_requests, i);
    if (auto truncate = value_for(given.auto_truncate, i)) model.auto_truncate = *truncate == "true";
    model.compute = value_for(computes, i).value_or(std::nullopt);
    model.default_prompt_name = value_for(given.default_prompt_names, i);
    model.default_prompt = value_for(given.default_prompts, i);
  }
  return options;
}

}  // namespace accel::cli

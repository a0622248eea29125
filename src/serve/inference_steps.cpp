#include "serve/inference_steps.hpp"

#include <fmt/format.h>

#include <cmath>

namespace accel::serve {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The model's refusal of a tokenisation, as the API answers it. The model says an input is too long with the same
// code as any other invalid input: it is too long exactly when cutting it would have tokenised it.
template <class Tokenize>
ApiResult<embed::TokenBatch> answer_tokens(const RouteContext& context, embed::Truncation truncation,
                                           std::string_view field, const Tokenize& tokenize) {
  const auto start = std::chrono::steady_clock::now();
  Result<embed::TokenBatch> tokens = tokenize(truncation);
  const auto end = std::chrono::steady_clock::now();
  const double tokenizing = std::chrono::duration<double>(end - start).count();
  context.trace.tokenize_seconds += tokenizing;
  context.trace.record(Stage::tokenize, start, end);
  context.metrics.observe_stage(Stage::tokenize, tokenizing);
  if (tokens.ok()) return std::move(*tokens);
  ApiError error = ApiError::from(tokens.status());
  error.param = std::string(field);
  error.message = fmt::format("'{}': {}", field, error.message);
  if (tokens.code() == Code::invalid_argument && truncation == embed::Truncation::refuse &&
      tokenize(embed::Truncation::right).ok()) {
    error.status = 413;
    error.code = "input_too_long";
    error.message +=
        fmt::format(" (max_sequence_length {}); set 'truncate' to cut it", context.model->info().max_sequence_length);
  }
  return error;
}

std::string quoted_names(const embed::ModelInfo& info) {
  std::string known;
  for (const auto& [name, prompt] : info.prompts) known += (known.empty() ? "'" : ", '") + name + "'";
  return known.empty() ? "no prompts" : "the prompts " + known;
}

}  // namespace

embed::EmbedOptions prompt_options(const RouteContext& context, const TextOptions& options) {
  if (options.prompt_name) return {.prompt_name = options.prompt_name};
  if (context.options.default_prompt) return {.prompt = context.options.default_prompt};
  return {.prompt_name = context.options.default_prompt_name};
}

std::string prompt_text(const RouteContext& context, const TextOptions& options) {
  const embed::EmbedOptions chosen = prompt_options(context, options);
  if (chosen.prompt) return *chosen.prompt;
  const embed::ModelInfo& info = context.model->info();
  const auto prompt = info.prompts.find(chosen.prompt_name.value_or(info.default_prompt_name));
  return prompt == info.prompts.end() ? std::string() : prompt->second;
}

Status check_default_prompt(const ServeOptions& options, const embed::ModelInfo& info) {
  if (!options.default_prompt_name || info.output == embed::Output::scores ||
      info.prompts.contains(*options.default_prompt_name))
    return Status();
  return invalid_argument(fmt::format("--default-prompt-name '{}': {} has {}", *options.default_prompt_name, info.name,
                                      quoted_names(info)));
}

embed::Truncation truncation_of(const TextOptions& options, bool auto_truncate) {
  return options.truncate.value_or(auto_truncate) ? options.direction : embed::Truncation::refuse;
}

std::optional<ApiError> check_prompt_name(const RouteContext& context, const TextOptions& options) {
  const embed::ModelInfo& info = context.model->info();
  if (!options.prompt_name || info.prompts.contains(*options.prompt_name)) return std::nullopt;
  return ApiError{400,
                  fmt::format("'prompt_name' is '{}'; {} has {}", *options.prompt_name, info.name, quoted_names(info)),
                  "prompt_name", "invalid_value"};
}

ApiResult<embed::TokenBatch> tokenize_texts(const RouteContext& context, std::span<const std::string> texts,
                                            const TextOptions& options, std::string_view field) {
  if (auto refused = check_prompt_name(context, options)) return std::move(*refused);
  const embed::EmbedOptions prompted = prompt_options(context, options);
  return answer_tokens(context, truncation_of(options, context.options.auto_truncate), field,
                       [&](embed::Truncation truncation) {
                         embed::EmbedOptions cut = prompted;
                         cut.truncation = truncation;
                         return context.model->tokenize(texts, cut);
                       });
}

ApiResult<embed::TokenBatch> tokenize_pairs(const RouteContext& context, std::string_view first,
                                            std::span<const std::string> seconds, const TextOptions& options,
                                            std::string_view field) {
  return answer_tokens(
      context, truncation_of(options, context.options.auto_truncate), field,
      [&](embed::Truncation truncation) { return context.model->tokenize_pairs(first, seconds, truncation); });
}

ApiResult<embed::Embeddings> run_tokens(RouteContext& context, embed::TokenBatch tokens, RunKind kind) {
  const std::size_t sequences = tokens.sequences();
  const std::size_t token_count = tokens.ids.size();
  const auto submitted = std::chrono::steady_clock::now();
  RunTimes times;
  Result<Future<embed::Embeddings>> queued = context.service.submit(std::move(tokens), kind, &times);
  if (!queued.ok()) return ApiError::refused(queued.status());
  Result<embed::Embeddings> rows = queued->wait();
  context.metrics.observe_stage(Stage::wait, seconds_since(submitted));
  context.trace.queue_seconds += times.queue_seconds;
  context.trace.compute_seconds += times.compute_seconds;
  // The service times them from the submit: the wait for a batch, then the batch's run.
  const auto dispatched = submitted + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                          std::chrono::duration<double>(times.queue_seconds));
  context.trace.record(Stage::queue, submitted, dispatched);
  context.trace.record(Stage::compute, dispatched,
                       dispatched + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(times.compute_seconds)));
  if (!rows.ok()) return ApiError::from(rows.status());
  context.metrics.count_inputs(sequences, token_count);
  context.trace.inputs += sequences;
  context.trace.tokens += token_count;
  return std::move(*rows);
}

std::optional<ApiError> refuse_unless_output(const RouteContext& context, embed::Output needed,
                                             std::string_view route) {
  const embed::ModelInfo& info = context.model->info();
  if (info.output == needed) return std::nullopt;
  auto what = [](embed::Output output) -> std::string_view {
    switch (output) {
      case embed::Output::dense: return "a dense embedding model";
      case embed::Output::sparse: return "a SPLADE (sparse) model";
      case embed::Output::scores: return "a cross-encoder (sequence classification) model";
    }
    return "another kind of model";
  };
  return ApiError{424,
                  fmt::format("{} needs {}; the model served, {}, is {} ({})", route, what(needed), info.name,
                              what(info.output), info.head),
                  "", "route_not_supported_by_model"};
}

ApiResult<embed::Embeddings> score_pairs(RouteContext& context, std::string_view query,
                                         std::span<const std::string> texts, const TextOptions& options,
                                         std::string_view field, std::string_view route) {
  if (auto refused = refuse_unless_output(context, embed::Output::scores, route)) return *refused;
  const embed::ModelInfo& info = context.model->info();
  if (info.dimensions != 1)
    return ApiError{424,
                    fmt::format("{} needs a cross-encoder of one label (a relevance score); {} has {} labels: POST "
                                "/predict answers them",
                                route, info.name, info.dimensions),
                    "", "route_not_supported_by_model"};
  ApiResult<embed::TokenBatch> tokens = tokenize_pairs(context, query, texts, options, field);
  if (auto* error = std::get_if<ApiError>(&tokens)) return std::move(*error);
  return run_tokens(context, std::move(std::get<embed::TokenBatch>(tokens)));
}

void shape_rows(embed::Embeddings& rows, std::uint32_t dimensions, bool normalize) {
  if (dimensions != 0 && dimensions < rows.dimensions) {
    std::vector<float> kept;
    kept.reserve(rows.count() * dimensions);
    for (std::size_t i = 0; i < rows.count(); ++i) {
      const std::span<const float> row = rows.row(i);
      kept.insert(kept.end(), row.begin(), row.begin() + dimensions);
    }
    rows.values = std::move(kept);
    rows.dimensions = dimensions;
  }
  if (!normalize) return;
  for (std::size_t i = 0; i < rows.count(); ++i) {
    float* row = rows.values.data() + i * rows.dimensions;
    double sum = 0;
    for (std::uint32_t j = 0; j < rows.dimensions; ++j) sum += double{row[j]} * row[j];
    // As torch.nn.functional.normalize: a zero row stays zero.
    const double scale = 1.0 / std::max(std::sqrt(sum), 1e-12);
    for (std::uint32_t j = 0; j < rows.dimensions; ++j) row[j] = static_cast<float>(row[j] * scale);
  }
}

}  // namespace accel::serve

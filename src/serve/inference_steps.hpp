// The steps every model route shares: texts (or text pairs) tokenised as the request's TextOptions say, with a
// too-long input answered 413 naming the field; the tokens run through the service; the route refused, naming why,
// when the model's head does not make what it answers; and a dense row's Matryoshka cut and normalisation.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "accel/embed/model.hpp"
#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"
#include "serve/endpoint.hpp"

namespace accel::serve {

// The cut a request asks for: its own truncate, else the server's auto_truncate; refuse when neither cuts.
[[nodiscard]] embed::Truncation truncation_of(const TextOptions& options, bool auto_truncate);

// 400 naming prompt_name and the model's prompts when the request names a prompt the model lacks.
[[nodiscard]] std::optional<ApiError> check_prompt_name(const RouteContext& context, const TextOptions& options);

// The prompt of a request's texts as the model takes it: the request's prompt_name, else the server's default
// prompt name or text (ServeOptions), else nothing set (the model then puts the folder's default prompt).
[[nodiscard]] embed::EmbedOptions prompt_options(const RouteContext& context, const TextOptions& options);
// The text of that prompt, as put before each text ("" for none).
[[nodiscard]] std::string prompt_text(const RouteContext& context, const TextOptions& options);

// Whether `options`' default prompt name is one of the model's prompts (a server is not started with one that is
// not): invalid_argument naming --default-prompt-name and the prompts it has. Only models that embed single texts
// are checked; a cross-encoder never takes a prompt.
[[nodiscard]] Status check_default_prompt(const ServeOptions& options, const embed::ModelInfo& info);

// Token ids of `texts` (field: the request's name for them, named in errors). An input over max_sequence_length
// that is not to be cut is 413 input_too_long; a prompt name the model lacks or invalid UTF-8 is 400.
[[nodiscard]] ApiResult<embed::TokenBatch> tokenize_texts(const RouteContext& context,
                                                          std::span<const std::string> texts,
                                                          const TextOptions& options, std::string_view field);
// Token and type ids of (first, second) for each second, likewise.
[[nodiscard]] ApiResult<embed::TokenBatch> tokenize_pairs(const RouteContext& context, std::string_view first,
                                                          std::span<const std::string> seconds,
                                                          const TextOptions& options, std::string_view field);

// The rows of `tokens` from the model, through the batcher; the queue's refusal (429/503) or the model's error.
[[nodiscard]] ApiResult<embed::Embeddings> run_tokens(RouteContext& context, embed::TokenBatch tokens,
                                                      RunKind kind = RunKind::pooled);

// 424, as TEI answers a route its model cannot serve, naming the route, what the model makes and what it needs;
// nothing when the model's output is `needed`.
[[nodiscard]] std::optional<ApiError> refuse_unless_output(const RouteContext& context, embed::Output needed,
                                                           std::string_view route);

// A cross-encoder's relevance logit of `query` with each of `texts` (field: the request's name for them), one row
// each; 424 naming `route` unless the model is a cross-encoder of one label.
[[nodiscard]] ApiResult<embed::Embeddings> score_pairs(RouteContext& context, std::string_view query,
                                                       std::span<const std::string> texts, const TextOptions& options,
                                                       std::string_view field, std::string_view route);

// Keeps the first `dimensions` of each row (0: all of them); then scales each row to unit length when `normalize`.
void shape_rows(embed::Embeddings& rows, std::uint32_t dimensions, bool normalize);

}  // namespace accel::serve

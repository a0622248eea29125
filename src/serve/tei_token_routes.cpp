// TEI's token routes, as entries of the server's table: POST /decode (token ids back to text, by the model's
// tokenizer, on the connection's thread: no device work) and /embed_all (the encoder's per-token vectors, batched
// with the other requests by tokens and run as token-vector runs: InferenceService's RunKind::token_vectors).
#include <fmt/format.h>

#include "serve/inference_steps.hpp"
#include "serve/tei_routes.hpp"
#include "serve/tei_token_api.hpp"

namespace accel::serve {
namespace {

using Method = Endpoint::Method;

struct DecodeRoute {
  static ApiResult<DecodeRequest> parse(std::string_view body, const RouteContext& context) {
    return parse_tei_decode_request(body, context.limits);
  }
  static ApiResult<std::vector<std::string>> run(DecodeRequest& request, RouteContext& context) {
    std::vector<std::string> texts;
    texts.reserve(request.sequences.size());
    for (std::size_t i = 0; i < request.sequences.size(); ++i) {
      Result<std::string> text = context.model->decode(request.sequences[i], request.skip_special_tokens);
      if (!text.ok()) {
        ApiError error = ApiError::from(text.status());
        error.param = "ids";
        error.message = fmt::format("'ids': {}", error.message);
        return error;
      }
      texts.push_back(std::move(*text));
    }
    return texts;
  }
  static std::string render(const std::vector<std::string>& texts, const DecodeRequest&) {
    return tei_decode_response(texts);
  }
};

struct EmbedAllRoute {
  static ApiResult<EmbedRequest> parse(std::string_view body, const RouteContext& context) {
    return parse_tei_embed_all_request(body, context.limits);
  }
  static ApiResult<embed::Embeddings> run(EmbedRequest& request, RouteContext& context) {
    ApiResult<embed::TokenBatch> tokens = tokenize_texts(context, request.texts, request.text, "inputs");
    if (auto* error = std::get_if<ApiError>(&tokens)) return std::move(*error);
    embed::TokenBatch& batch = std::get<embed::TokenBatch>(tokens);
    // As TEI refuses any request over its max_batch_tokens: here it also bounds the answer, a row of the hidden
    // size per token.
    if (batch.ids.size() > context.options.batching.batch_tokens)
      return ApiError{413,
                      fmt::format("'inputs' has {} tokens, more than the server's batch_tokens ({})", batch.ids.size(),
                                  context.options.batching.batch_tokens),
                      "inputs", "too_many_tokens"};
    return run_tokens(context, std::move(batch), RunKind::token_vectors);
  }
  static std::string render(const embed::Embeddings& vectors, const EmbedRequest&) {
    return tei_embed_all_response(vectors);
  }
};

}  // namespace

std::vector<Endpoint> tei_token_endpoints() {
  return {endpoint_of<DecodeRoute>(Method::post, "/decode", ApiFamily::tei),
          endpoint_of<EmbedAllRoute>(Method::post, "/embed_all", ApiFamily::tei)};
}

}  // namespace accel::serve

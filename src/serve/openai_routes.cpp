#include "serve/openai_routes.hpp"

#include <nlohmann/json.hpp>

#include "serve/cohere_rerank_api.hpp"
#include "serve/inference_steps.hpp"
#include "serve/openai_api.hpp"

namespace accel::serve {
namespace {

struct EmbeddingsRoute {
  static ApiResult<EmbedRequest> parse(std::string_view body, const RouteContext& context) {
    ApiResult<EmbedRequest> request = parse_openai_request(body, context.limits);
    if (auto* parsed = std::get_if<EmbedRequest>(&request); parsed && parsed->model.empty())
      parsed->model = context.name;
    return request;
  }

  static ApiResult<embed::Embeddings> run(EmbedRequest& request, RouteContext& context) {
    if (auto refused = refuse_unless_output(context, embed::Output::dense, "POST /v1/embeddings")) return *refused;
    embed::TokenBatch tokens;
    if (request.texts.empty()) {
      for (const auto& sequence : request.token_inputs) tokens.append(sequence);
    } else {
      ApiResult<embed::TokenBatch> tokenized = tokenize_texts(context, request.texts, request.text, "input");
      if (auto* error = std::get_if<ApiError>(&tokenized)) return std::move(*error);
      tokens = std::move(std::get<embed::TokenBatch>(tokenized));
    }
    ApiResult<embed::Embeddings> rows = run_tokens(context, std::move(tokens));
    if (auto* embeddings = std::get_if<embed::Embeddings>(&rows)) {
      const bool cut = request.dimensions != 0 && request.dimensions < embeddings->dimensions;
      shape_rows(*embeddings, request.dimensions, cut && context.limits.normalized);
    }
    return rows;
  }

  static std::string render(const embed::Embeddings& rows, const EmbedRequest& request) {
    return openai_response(rows, request);
  }
};

struct CohereRerankRoute {
  static ApiResult<CohereRerankRequest> parse(std::string_view body, const RouteContext& context) {
    ApiResult<CohereRerankRequest> request = parse_cohere_rerank_request(body, context.limits);
    if (auto* parsed = std::get_if<CohereRerankRequest>(&request); parsed && parsed->model.empty())
      parsed->model = context.name;
    return request;
  }
  static ApiResult<embed::Embeddings> run(CohereRerankRequest& request, RouteContext& context) {
    return score_pairs(context, request.query, request.documents, request.text, "documents", "POST /v1/rerank");
  }
  static std::string render(const embed::Embeddings& logits, const CohereRerankRequest& request) {
    return cohere_rerank_response(logits, request);
  }
};

// OpenAI's list of models: what a client may name in "model".
struct ModelsRoute {
  struct Nothing {};
  static ApiResult<Nothing> parse(std::string_view, const RouteContext&) { return Nothing{}; }
  static ApiResult<std::string> run(Nothing&, RouteContext& context) {
    nlohmann::json data = nlohmann::json::array();
    for (const std::string& name : context.models)
      data.push_back({{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "accel"}});
    return nlohmann::json{{"object", "list"}, {"data", std::move(data)}}.dump(-1, ' ', false,
                                                                              nlohmann::json::error_handler_t::replace);
  }
  static std::string render(const std::string& body, const Nothing&) { return body; }
};

}  // namespace

std::vector<Endpoint> openai_endpoints() {
  return {endpoint_of<EmbeddingsRoute>(Endpoint::Method::post, "/v1/embeddings", ApiFamily::openai),
          endpoint_of<CohereRerankRoute>(Endpoint::Method::post, "/v1/rerank", ApiFamily::openai),
          endpoint_of<ModelsRoute>(Endpoint::Method::get, "/v1/models", ApiFamily::openai)};
}

}  // namespace accel::serve

#include "serve/tei_routes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "serve/inference_steps.hpp"
#include "serve/tei_api.hpp"
#include "serve/tei_scores_api.hpp"
#include "serve/tei_similarity_api.hpp"

namespace accel::serve {
namespace {

using nlohmann::json;
using Method = Endpoint::Method;

ApiResult<embed::Embeddings> embed_texts(EmbedRequest& request, RouteContext& context) {
  ApiResult<embed::TokenBatch> tokens = tokenize_texts(context, request.texts, request.text, "inputs");
  if (auto* error = std::get_if<ApiError>(&tokens)) return std::move(*error);
  return run_tokens(context, std::move(std::get<embed::TokenBatch>(tokens)));
}

struct EmbedRoute {
  static ApiResult<EmbedRequest> parse(std::string_view body, const RouteContext& context) {
    return parse_tei_embed_request(body, context.limits, TeiEmbedKind::dense);
  }
  static ApiResult<embed::Embeddings> run(EmbedRequest& request, RouteContext& context) {
    if (auto refused = refuse_unless_output(context, embed::Output::dense, "POST /embed")) return *refused;
    ApiResult<embed::Embeddings> rows = embed_texts(request, context);
    if (auto* embeddings = std::get_if<embed::Embeddings>(&rows)) {
      const bool cut = request.dimensions != 0 && request.dimensions < embeddings->dimensions;
      // A unit-length model's rows need scaling again only once cut.
      shape_rows(*embeddings, request.dimensions, request.normalize && (cut || !context.limits.normalized));
    }
    return rows;
  }
  static std::string render(const embed::Embeddings& rows, const EmbedRequest&) { return tei_embed_response(rows); }
};

struct EmbedSparseRoute {
  static ApiResult<EmbedRequest> parse(std::string_view body, const RouteContext& context) {
    return parse_tei_embed_request(body, context.limits, TeiEmbedKind::sparse);
  }
  static ApiResult<embed::Embeddings> run(EmbedRequest& request, RouteContext& context) {
    if (auto refused = refuse_unless_output(context, embed::Output::sparse, "POST /embed_sparse")) return *refused;
    return embed_texts(request, context);
  }
  static std::string render(const embed::Embeddings& rows, const EmbedRequest&) { return tei_sparse_response(rows); }
};

struct RerankRoute {
  static ApiResult<RerankRequest> parse(std::string_view body, const RouteContext& context) {
    return parse_tei_rerank_request(body, context.limits);
  }
  static ApiResult<std::vector<float>> run(RerankRequest& request, RouteContext& context) {
    ApiResult<embed::Embeddings> rows =
        score_pairs(context, request.query, request.texts, request.text, "texts", "POST /rerank");
    if (auto* error = std::get_if<ApiError>(&rows)) return std::move(*error);
    return std::move(std::get<embed::Embeddings>(rows).values);
  }
  static std::string render(const std::vector<float>& scores, const RerankRequest& request) {
    return tei_rerank_response(scores, request);
  }
};

struct SimilarityRoute {
  static ApiResult<SimilarityRequest> parse(std::string_view body, const RouteContext& context) {
    return parse_tei_similarity_request(body, context.limits);
  }
  static ApiResult<std::vector<float>> run(SimilarityRequest& request, RouteContext& context) {
    if (auto refused = refuse_unless_output(context, embed::Output::dense, "POST /similarity")) return *refused;
    // The source sentence runs as the first input of the same batch as the sentences.
    std::vector<std::string> texts;
    texts.reserve(request.sentences.size() + 1);
    texts.push_back(std::move(request.source_sentence));
    std::ranges::move(request.sentences, std::back_inserter(texts));
    ApiResult<embed::TokenBatch> tokens = tokenize_texts(context, texts, request.text, "inputs");
    if (auto* error = std::get_if<ApiError>(&tokens)) return std::move(*error);
    ApiResult<embed::Embeddings> rows = run_tokens(context, std::move(std::get<embed::TokenBatch>(tokens)));
    if (auto* error = std::get_if<ApiError>(&rows)) return std::move(*error);
    return cosine_to_first(std::get<embed::Embeddings>(rows));
  }
  static std::string render(const std::vector<float>& scores, const SimilarityRequest&) {
    return tei_similarity_response(scores);
  }
};

struct PredictRoute {
  static ApiResult<PredictRequest> parse(std::string_view body, const RouteContext& context) {
    return parse_tei_predict_request(body, context.limits);
  }
  struct Answer {
    embed::Embeddings logits;
    std::vector<std::string> labels;
  };
  static ApiResult<Answer> run(PredictRequest& request, RouteContext& context) {
    if (auto refused = refuse_unless_output(context, embed::Output::scores, "POST /predict")) return *refused;
    embed::TokenBatch packed;
    for (std::size_t i = 0; i < request.inputs.size(); ++i) {
      const PredictInput& input = request.inputs[i];
      const std::string field = request.batch ? fmt::format("inputs[{}]", i) : "inputs";
      ApiResult<embed::TokenBatch> tokens =
          input.second ? tokenize_pairs(context, input.first, std::span(&*input.second, 1), request.text, field)
                       : tokenize_texts(context, std::span(&input.first, 1), request.text, field);
      if (auto* error = std::get_if<ApiError>(&tokens)) return std::move(*error);
      const embed::TokenBatch& one = std::get<embed::TokenBatch>(tokens);
      packed.append(one.ids, one.type_ids);
    }
    ApiResult<embed::Embeddings> rows = run_tokens(context, std::move(packed));
    if (auto* error = std::get_if<ApiError>(&rows)) return std::move(*error);
    return Answer{std::move(std::get<embed::Embeddings>(rows)), context.model->info().labels};
  }
  static std::string render(const Answer& answer, const PredictRequest& request) {
    return tei_predict_response(answer.logits, answer.labels, request);
  }
};

struct TokenizeRoute {
  struct Answer {
    std::vector<text::Encoding> encodings;
    std::vector<std::string> prompted;  // the texts the offsets count bytes of
  };
  static ApiResult<TokenizeRequest> parse(std::string_view body, const RouteContext& context) {
    return parse_tei_tokenize_request(body, context.limits);
  }
  static ApiResult<Answer> run(TokenizeRequest& request, RouteContext& context) {
    if (auto refused = check_prompt_name(context, request.text)) return std::move(*refused);
    Result<std::vector<text::Encoding>> encodings =
        context.model->encode(request.texts, prompt_options(context, request.text), request.add_special_tokens);
    if (!encodings.ok()) {
      ApiError error = ApiError::from(encodings.status());
      error.param = "inputs";
      error.message = "'inputs': " + error.message;
      return error;
    }
    // The prompt the model put before each text: the named one, else the server's default, else the folder's.
    const std::string prompt = prompt_text(context, request.text);
    Answer answer{std::move(*encodings), {}};
    for (const std::string& text : request.texts) answer.prompted.push_back(prompt + text);
    return answer;
  }
  static std::string render(const Answer& answer, const TokenizeRequest&) {
    return tei_tokenize_response(answer.encodings, answer.prompted);
  }
};

// TEI's model_type: {"embedding": {"pooling"}}, {"classifier": {"id2label", "label2id"}} or {"reranker": ...}.
json tei_model_type(const embed::ModelInfo& info) {
  if (info.output != embed::Output::scores) {
    const std::string pooling =
        info.output == embed::Output::sparse ? "splade" : info.head.substr(0, info.head.find(' '));
    return {{"embedding", {{"pooling", pooling}}}};
  }
  json id2label = json::object(), label2id = json::object();
  for (std::size_t i = 0; i < info.labels.size(); ++i) {
    id2label[std::to_string(i)] = info.labels[i];
    label2id[info.labels[i]] = i;
  }
  return {{info.labels.size() == 1 ? "reranker" : "classifier", {{"id2label", id2label}, {"label2id", label2id}}}};
}

// TEI names dtypes as torch does.
std::string tei_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float32";
    case DType::f16: return "float16";
    case DType::bf16: return "bfloat16";
    default: return std::string(to_string(dtype));
  }
}

struct InfoRoute {
  struct Nothing {};
  static ApiResult<Nothing> parse(std::string_view, const RouteContext&) { return Nothing{}; }
  static ApiResult<std::string> run(Nothing&, RouteContext& context) {
    const embed::ModelInfo& info = context.model->info();
    const ServeOptions& options = context.options;
    json body = {
        // TEI's fields first.
        {"model_id", context.name},
        {"model_sha", nullptr},
        {"model_dtype", tei_dtype_name(info.compute)},
        {"model_type", tei_model_type(info)},
        {"max_concurrent_requests", options.batching.queue_requests},
        {"max_input_length", info.max_sequence_length},
        {"max_batch_tokens", options.batching.batch_tokens},
        {"max_batch_requests", options.batching.max_requests == 0 ? json() : json(options.batching.max_requests)},
        {"max_client_batch_size", options.max_inputs},
        {"auto_truncate", options.auto_truncate},
        {"tokenization_workers", nullptr},
        {"version", "accel"},
        // Then what accel adds: what the model is and what it answers.
        {"family", info.family},
        {"model_family_type", info.model_type},
        {"head", info.head},
        {"output", std::string(embed::to_string(info.output))},
        {"dimensions", info.dimensions},
        {"normalized", info.normalized},
        {"vocabulary", info.vocabulary},
        {"prompts", info.prompts},
        {"default_prompt_name", info.default_prompt_name.empty() ? json() : json(info.default_prompt_name)},
        // What a request that names no prompt gets, the server's options first.
        {"server_default_prompt_name", options.default_prompt_name ? json(*options.default_prompt_name) : json()},
        {"server_default_prompt", options.default_prompt ? json(*options.default_prompt) : json()},
        {"device", info.device},
        // Every model this server serves (GET /info?model=NAME describes that one).
        {"models", context.models},
    };
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  static std::string render(const std::string& body, const Nothing&) { return body; }
};

}  // namespace

std::vector<Endpoint> tei_endpoints() {
  return {endpoint_of<EmbedRoute>(Method::post, "/embed", ApiFamily::tei),
          endpoint_of<EmbedSparseRoute>(Method::post, "/embed_sparse", ApiFamily::tei),
          endpoint_of<RerankRoute>(Method::post, "/rerank", ApiFamily::tei),
          endpoint_of<PredictRoute>(Method::post, "/predict", ApiFamily::tei),
          endpoint_of<SimilarityRoute>(Method::post, "/similarity", ApiFamily::tei),
          endpoint_of<TokenizeRoute>(Method::post, "/tokenize", ApiFamily::tei),
          endpoint_of<InfoRoute>(Method::get, "/info", ApiFamily::tei)};
}

}  // namespace accel::serve

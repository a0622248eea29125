// The HTTP request path of `accel serve` without a server, for every route that takes a body: the body parsed by
// its route's parser against all-MiniLM-L6-v2's limits, the error body written in the route's family's shape when
// it is refused, and when it is accepted: its texts tokenised by the real tokenizer (as the model does, truncating
// on the side asked or refusing), its token inputs packed, the rows shaped as the route shapes them (dimensions,
// normalisation) and the response written for rows of that many inputs. Every body is also read for the "model" it
// names, as a server of several models does first. Headers and the HTTP framing are
// cpp-httplib's (a Debian library, not instrumented here).
//
// Input: one byte choosing the route by its distance from '0' modulo 10 ('0' OpenAI /v1/embeddings, '1' TEI /embed,
// '2' /embed_sparse, '3' /rerank, '4' /predict, '5' /tokenize, '6' /similarity, '7' Cohere's /v1/rerank,
// '8' /decode, '9' /embed_all), then the body.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "accel/embed/model.hpp"
#include "accel/text/tokenizer.hpp"
#include "serve/cohere_rerank_api.hpp"
#include "serve/inference_steps.hpp"
#include "serve/openai_api.hpp"
#include "serve/served_models.hpp"
#include "serve/tei_api.hpp"
#include "serve/tei_scores_api.hpp"
#include "serve/tei_similarity_api.hpp"
#include "serve/tei_token_api.hpp"

namespace {

using namespace accel;
using serve::ApiError;
using serve::ApiFamily;

constexpr serve::RequestLimits kLimits{
    .max_inputs = 2048, .max_sequence_length = 256, .dimensions = 384, .vocabulary = 30522, .normalized = true};

enum class Route : std::uint8_t {
  openai_embeddings,
  embed,
  embed_sparse,
  rerank,
  predict,
  tokenize,
  similarity,
  cohere_rerank,
  decode,
  embed_all
};
constexpr std::uint8_t kRoutes = 10;

const text::Tokenizer& tokenizer() {
  static const text::Tokenizer loaded = [] {
    auto result = text::Tokenizer::load(ACCEL_FUZZ_MINILM_TOKENIZER_JSON);
    if (!result.ok()) std::abort();
    return std::move(*result);
  }();
  return loaded;
}

// As the model cuts: at max_sequence_length on the side asked, or not at all when the request refuses (then a
// truncated encoding means the request is answered 413).
text::EncodeOptions encode_options(const serve::TextOptions& options) {
  const embed::Truncation truncation = serve::truncation_of(options, /*auto_truncate=*/false);
  return {.max_length = kLimits.max_sequence_length,
          .side = truncation == embed::Truncation::left ? text::TruncationSide::left : text::TruncationSide::right};
}

bool refused_as_too_long(const text::Encoding& encoding, const serve::TextOptions& options) {
  return encoding.truncated && serve::truncation_of(options, false) == embed::Truncation::refuse;
}

// Rows for `tokens`' sequences, `width` each, with a few nonzeros (so that a sparse response has terms).
embed::Embeddings rows_for(const embed::TokenBatch& tokens, std::uint32_t width) {
  embed::Embeddings rows{.dimensions = width};
  for (std::size_t i = 0; i < tokens.sequences(); ++i) rows.tokens.push_back(tokens.length(i));
  rows.values.assign(rows.tokens.size() * width, 0.0f);
  for (std::size_t i = 0; i < rows.values.size(); i += 7) rows.values[i] = 0.5f - static_cast<float>(i % 3);
  return rows;
}

void answer_embed(const serve::EmbedRequest& request, Route route) {
  embed::TokenBatch batch;
  auto encoded = tokenizer().encode_batch(request.texts, encode_options(request.text), 1);
  if (!encoded.ok()) return;
  for (const text::Encoding& encoding : *encoded) {
    if (refused_as_too_long(encoding, request.text)) return;
    batch.append(encoding.ids);
  }
  for (const auto& sequence : request.token_inputs) batch.append(sequence);
  if (route == Route::embed_sparse) {
    (void)serve::tei_sparse_response(rows_for(batch, kLimits.vocabulary));
    return;
  }
  embed::Embeddings rows = rows_for(batch, kLimits.dimensions);
  serve::shape_rows(rows, request.dimensions, request.normalize || request.dimensions != 0);
  (void)(route == Route::embed ? serve::tei_embed_response(rows) : serve::openai_response(rows, request));
}

void answer_rerank(const serve::RerankRequest& request) {
  auto pairs = tokenizer().encode_pairs(request.query, request.texts, encode_options(request.text), 1);
  if (!pairs.ok()) return;
  std::vector<float> scores;
  for (const text::Encoding& pair : *pairs) {
    if (refused_as_too_long(pair, request.text)) return;
    scores.push_back(static_cast<float>(pair.ids.size() % 13) - 6.0f);
  }
  (void)serve::tei_rerank_response(scores, request);
}

void answer_cohere_rerank(const serve::CohereRerankRequest& request) {
  auto pairs = tokenizer().encode_pairs(request.query, request.documents, encode_options(request.text), 1);
  if (!pairs.ok()) return;
  embed::TokenBatch batch;
  for (const text::Encoding& pair : *pairs) {
    if (refused_as_too_long(pair, request.text)) return;
    batch.append(pair.ids, pair.type_ids);
  }
  (void)serve::cohere_rerank_response(rows_for(batch, 1), request);
}

void answer_predict(const serve::PredictRequest& request) {
  embed::TokenBatch batch;
  for (const serve::PredictInput& input : request.inputs) {
    auto encoded = input.second ? tokenizer().encode_pair(input.first, *input.second, encode_options(request.text))
                                : tokenizer().encode(input.first, encode_options(request.text));
    if (!encoded.ok() || refused_as_too_long(*encoded, request.text)) return;
    batch.append(encoded->ids, encoded->type_ids);
  }
  (void)serve::tei_predict_response(rows_for(batch, 2), {"negative", "positive"}, request);
}

void answer_tokenize(const serve::TokenizeRequest& request) {
  auto encoded = tokenizer().encode_batch(request.texts, {.add_special_tokens = request.add_special_tokens}, 1);
  if (!encoded.ok()) return;
  (void)serve::tei_tokenize_response(*encoded, request.texts);
}

void answer_similarity(const serve::SimilarityRequest& request) {
  std::vector<std::string> texts{request.source_sentence};
  texts.insert(texts.end(), request.sentences.begin(), request.sentences.end());
  auto encoded = tokenizer().encode_batch(texts, encode_options(request.text), 1);
  if (!encoded.ok()) return;
  embed::TokenBatch batch;
  for (const text::Encoding& encoding : *encoded) {
    if (refused_as_too_long(encoding, request.text)) return;
    batch.append(encoding.ids);
  }
  (void)serve::tei_similarity_response(serve::cosine_to_first(rows_for(batch, kLimits.dimensions)));
}

void answer_decode(const serve::DecodeRequest& request) {
  std::vector<std::string> texts;
  for (const std::vector<std::int32_t>& ids : request.sequences) {
    auto text = tokenizer().decode(ids, request.skip_special_tokens);
    if (!text.ok()) std::abort();  // MiniLM's decoder is WordPiece: decode refuses nothing
    texts.push_back(std::move(*text));
  }
  (void)serve::tei_decode_response(texts);
}

void answer_embed_all(const serve::EmbedRequest& request) {
  auto encoded = tokenizer().encode_batch(request.texts, encode_options(request.text), 1);
  if (!encoded.ok()) return;
  embed::TokenBatch batch;
  for (const text::Encoding& encoding : *encoded) {
    if (refused_as_too_long(encoding, request.text)) return;
    batch.append(encoding.ids);
  }
  // A row per token, as Model::embed_token_vectors answers (a narrow one: the shape is what is exercised).
  embed::Embeddings rows{.dimensions = 4};
  for (std::size_t i = 0; i < batch.sequences(); ++i) rows.tokens.push_back(batch.length(i));
  rows.values.assign(batch.ids.size() * rows.dimensions, 0.25f);
  (void)serve::tei_embed_all_response(rows);
}

// Parses `body` with the route's parser; a refusal is written in the route's shape, an accepted request answered.
template <class Request, class Answer>
void run(serve::ApiResult<Request> parsed, ApiFamily family, const Answer& answer) {
  if (const auto* error = std::get_if<ApiError>(&parsed)) {
    (void)serve::error_body(family, *error);
    return;
  }
  answer(std::get<Request>(parsed));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto route = static_cast<Route>(static_cast<std::uint8_t>(data[0] - '0') % kRoutes);
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  // Which model a request is for, as a server of several models reads it before the route's parser.
  const serve::ApiResult<std::string> named = serve::requested_model(body);
  if (const auto* error = std::get_if<ApiError>(&named)) (void)serve::error_body(ApiFamily::openai, *error);
  switch (route) {
    case Route::openai_embeddings:
      run(serve::parse_openai_request(body, kLimits), ApiFamily::openai,
          [](const serve::EmbedRequest& request) { answer_embed(request, Route::openai_embeddings); });
      break;
    case Route::embed:
    case Route::embed_sparse: {
      const auto kind = route == Route::embed ? serve::TeiEmbedKind::dense : serve::TeiEmbedKind::sparse;
      run(serve::parse_tei_embed_request(body, kLimits, kind), ApiFamily::tei,
          [route](const serve::EmbedRequest& request) { answer_embed(request, route); });
      break;
    }
    case Route::rerank: run(serve::parse_tei_rerank_request(body, kLimits), ApiFamily::tei, answer_rerank); break;
    case Route::predict: run(serve::parse_tei_predict_request(body, kLimits), ApiFamily::tei, answer_predict); break;
    case Route::tokenize: run(serve::parse_tei_tokenize_request(body, kLimits), ApiFamily::tei, answer_tokenize); break;
    case Route::similarity:
      run(serve::parse_tei_similarity_request(body, kLimits), ApiFamily::tei, answer_similarity);
      break;
    case Route::cohere_rerank:
      run(serve::parse_cohere_rerank_request(body, kLimits), ApiFamily::openai, answer_cohere_rerank);
      break;
    case Route::decode: run(serve::parse_tei_decode_request(body, kLimits), ApiFamily::tei, answer_decode); break;
    case Route::embed_all:
      run(serve::parse_tei_embed_all_request(body, kLimits), ApiFamily::tei, answer_embed_all);
      break;
  }
  return 0;
}

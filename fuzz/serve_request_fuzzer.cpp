// The HTTP request path of `accel serve` without a server: a POST body parsed by the OpenAI or TEI API against
// all-MiniLM-L6-v2's limits, the error body written when it is refused, and when it is accepted: its texts
// tokenised by the real tokenizer (as the model does, truncating or not), its token inputs packed, and the
// response written for embeddings of that many inputs. Headers and the HTTP framing are cpp-httplib's (a
// Debian library, not instrumented here).
//
// Input: one byte choosing the API (even: OpenAI /v1/embeddings, odd: TEI /embed), then the body.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "accel/embed/model.hpp"
#include "accel/text/tokenizer.hpp"
#include "serve/openai_api.hpp"
#include "serve/tei_api.hpp"

namespace {

using namespace accel;

constexpr serve::RequestLimits kLimits{
    .max_inputs = 2048, .max_sequence_length = 256, .dimensions = 384, .vocabulary = 30522};

const text::Tokenizer& tokenizer() {
  static const text::Tokenizer loaded = [] {
    auto result = text::Tokenizer::load(ACCEL_FUZZ_MINILM_TOKENIZER_JSON);
    if (!result.ok()) std::abort();
    return std::move(*result);
  }();
  return loaded;
}

void answer(const serve::EmbedRequest& request, bool tei) {
  embed::Embeddings embeddings{.dimensions = kLimits.dimensions};
  embed::TokenBatch batch;
  // As the model tokenizes them: one batch (on this thread), refused when a text is cut and truncate is not asked.
  auto encoded = tokenizer().encode_batch(request.texts, {.max_length = kLimits.max_sequence_length}, 1);
  if (!encoded.ok()) return;
  for (const text::Encoding& encoding : *encoded) {
    if (encoding.truncated && !request.truncate) return;
    batch.append(encoding.ids);
  }
  for (const auto& sequence : request.token_inputs) batch.append(sequence);
  for (std::size_t i = 0; i < batch.sequences(); ++i) embeddings.tokens.push_back(batch.length(i));
  embeddings.values.assign(embeddings.tokens.size() * embeddings.dimensions, 0.5f);
  (void)(tei ? serve::tei_response(embeddings) : serve::openai_response(embeddings, request));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const bool tei = (data[0] & 1) != 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto parsed = tei ? serve::parse_tei_request(body, kLimits) : serve::parse_openai_request(body, kLimits);
  if (const auto* error = std::get_if<serve::ApiError>(&parsed)) {
    (void)(tei ? error->tei_body() : error->openai_body());
    return 0;
  }
  answer(std::get<serve::EmbedRequest>(parsed), tei);
  return 0;
}

// text-embeddings-inference's request bodies and responses for its text routes: POST /embed and /embed_sparse
// (EmbedRequest), /tokenize (TokenizeRequest), in the shapes of TEI's OpenAPI document.
//
// /embed: `inputs` (a string or an array of strings), `normalize` (default true: rows scaled to unit length; false
// is refused, 400, for a model whose rows are unit length already, rather than answered with rows that claim
// otherwise), `truncate` (default: the server's --auto-truncate; otherwise an input over the model's maximum is
// 413), `truncation_direction`, `prompt_name`, `dimensions` (Matryoshka: the first this many, then normalised).
// The response is an array of embeddings. /embed_sparse takes the same fields but `normalize` and `dimensions`,
// and answers, per input, the nonzero terms as [{"index", "value"}]. /tokenize takes `inputs`,
// `add_special_tokens` (default true) and `prompt_name`, and answers per input its tokens as
// {"id", "text", "special", "start", "stop"} (byte offsets into the prompted text; null for a special token).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "accel/embed/model.hpp"
#include "serve/api_error.hpp"
#include "serve/embed_request.hpp"

namespace accel::serve {

enum class TeiEmbedKind : std::uint8_t { dense, sparse };

[[nodiscard]] ApiResult<EmbedRequest> parse_tei_embed_request(std::string_view body, const RequestLimits& limits,
                                                              TeiEmbedKind kind);
// [[floats...], ...]
[[nodiscard]] std::string tei_embed_response(const embed::Embeddings& embeddings);
// [[{"index": i, "value": v}, ...], ...]
[[nodiscard]] std::string tei_sparse_response(const embed::Embeddings& embeddings);

struct TokenizeRequest {
  std::vector<std::string> texts;
  bool add_special_tokens = true;
  TextOptions text;  // prompt_name only: /tokenize never cuts
};
[[nodiscard]] ApiResult<TokenizeRequest> parse_tei_tokenize_request(std::string_view body, const RequestLimits& limits);
// `texts` as tokenised (prompt included), one Encoding each.
[[nodiscard]] std::string tei_tokenize_response(const std::vector<text::Encoding>& encodings,
                                                const std::vector<std::string>& prompted_texts);

// `inputs`: a string or a non-empty array of strings, at most limits.max_inputs (413).
[[nodiscard]] ApiResult<std::vector<std::string>> read_tei_inputs(const nlohmann::json& doc,
                                                                  const RequestLimits& limits);

}  // namespace accel::serve

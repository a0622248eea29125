// tokenizers' BPE model: a word starts as one piece per code point (the continuing-subword prefix on all but the
// first, the end-of-word suffix on the last; unknown code points become byte-fallback pieces or the unknown
// token, possibly fused), then the merges are applied lowest rank first until none applies.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string_view>

#include "accel/core/result.hpp"
#include "text/tokenizer/components.hpp"

namespace accel::text {

// `object` is the tokenizer.json "model" object (at `path`) of type BPE. Dropout other than null or 0 is refused:
// we tokenize deterministically.
Result<std::unique_ptr<TokenModel>> make_bpe(const nlohmann::json& object, std::string_view path);

}  // namespace accel::text

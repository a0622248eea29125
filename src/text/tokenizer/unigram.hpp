// tokenizers' Unigram model (SentencePiece's): the segmentation of the word into vocabulary pieces whose scores
// add up highest (Viterbi over the pieces a trie finds at each position). A code point no one-code-point piece
// covers may be taken as the unknown piece, scored 10 below the lowest score; consecutive unknowns fuse into one
// token, which byte fallback may turn into <0xXX> pieces.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string_view>

#include "accel/core/result.hpp"
#include "text/tokenizer/components.hpp"

namespace accel::text {

// `object` is the tokenizer.json "model" object (at `path`) of type Unigram.
Result<std::unique_ptr<TokenModel>> make_unigram(const nlohmann::json& object, std::string_view path);

}  // namespace accel::text

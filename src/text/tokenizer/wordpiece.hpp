// tokenizers' WordPiece model: the longest vocabulary piece at each position of the word, pieces after the first
// looked up with the continuing-subword prefix ("##"); a word with a position no piece matches, or longer than
// max_input_chars_per_word code points, becomes the one unknown token.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string_view>

#include "accel/core/result.hpp"
#include "text/tokenizer/components.hpp"

namespace accel::text {

// `object` is the tokenizer.json "model" object (at `path`) of type WordPiece.
Result<std::unique_ptr<TokenModel>> make_wordpiece(const nlohmann::json& object, std::string_view path);

}  // namespace accel::text

// A yes/no reranker's input (model_folder.hpp's YesNoReranker): each (query, passage) pair written into the model
// card's prompt and tokenised as Qwen3-Reranker's card does it, so that the ids are the ones its scores were made on.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "accel/embed/model.hpp"
#include "accel/text/tokenizer.hpp"
#include "embed/model_folder.hpp"

namespace accel::embed {

// Per passage: the prefix's ids, then "<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {passage}" encoded
// (with the post-processor's special tokens, as the card's tokenizer call adds them) and cut to what max_length
// leaves beside the prefix and suffix (Truncation::right: the passage's end, as the card; left: the instruction's
// beginning; refuse: invalid_argument naming the passage), then the suffix's ids. The prefix and suffix are
// encoded without special tokens. invalid_argument when they alone leave no room within max_length.
[[nodiscard]] Result<TokenBatch> tokenize_yes_no_pairs(const text::Tokenizer& tokenizer, const YesNoReranker& head,
                                                       std::string_view query, std::span<const std::string> passages,
                                                       Truncation truncation, std::uint32_t max_length,
                                                       unsigned threads);

}  // namespace accel::embed

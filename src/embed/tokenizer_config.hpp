// accel::embed::TokenizerConfig — what a HuggingFace tokenizer.json says, for the one pipeline we run: the
// BertNormalizer, the BertPreTokenizer, a WordPiece model and a [CLS] … [SEP] post-processor (TemplateProcessing
// or BertProcessing), with added tokens that are matched before normalization. Anything else is refused with
// invalid_argument naming the field and its value, so that a tokenizer we would get wrong never loads.
//
// The file's "truncation" and "padding" are not read: callers choose the length, and we never pad.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accel/core/result.hpp"
#include "embed/added_token_matcher.hpp"
#include "embed/bert_normalizer.hpp"
#include "embed/wordpiece_model.hpp"

namespace accel::embed {

struct TokenizerConfig {
  BertNormalizer::Options normalizer;
  std::vector<AddedToken> added_tokens;
  std::vector<std::pair<std::string, std::int32_t>> vocabulary;
  WordPieceModel::Options wordpiece;
  std::int32_t cls_id = 0;  // the post-processor's tokens around every sequence
  std::int32_t sep_id = 0;

  // Parses the text of a tokenizer.json; the text is untrusted.
  static Result<TokenizerConfig> parse(std::string_view json_text);
};

}  // namespace accel::embed

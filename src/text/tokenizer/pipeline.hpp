// What a Tokenizer runs: the stages of its tokenizer.json (tokenizer_json.cpp builds it, tokenizer.cpp runs it).
#pragma once

#include <memory>
#include <string>

#include "accel/text/tokenizer.hpp"
#include "text/tokenizer/added_vocabulary.hpp"
#include "text/tokenizer/components.hpp"

namespace accel::text {

struct Tokenizer::Pipeline {
  // Null where the file's stage is null: the text passes through unchanged.
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<TokenModel> model;  // never null
  std::unique_ptr<PostProcessor> post_processor;
  // Null where the file has none (decoded tokens are joined with spaces) or names one we do not run; then
  // decoder_refusal says which, and decode() answers it, so that a tokenizer we can encode with still loads.
  std::unique_ptr<Decoder> decoder;
  Status decoder_refusal;
  AddedVocabulary added_vocabulary;
  std::string description;  // see Tokenizer::describe
};

}  // namespace accel::text

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
  AddedVocabulary added_vocabulary;
  std::string description;  // see Tokenizer::describe
};

}  // namespace accel::text

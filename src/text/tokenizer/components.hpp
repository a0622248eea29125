// The four stages of a tokenizer.json pipeline, each an interface with one implementation per component type the
// file may name: normalizer → pre-tokenizer → model → post-processor (the layout of HuggingFace `tokenizers`).
//
// Each stage's factory reads its object of the file (the JSON is untrusted) and returns invalid_argument naming the
// field and the value when the object is malformed, or the component type when we do not implement it, so that a
// tokenizer we would get wrong never loads:
//   normalizer.cpp       make_normalizer      BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip,
//                                             Replace, Prepend, Precompiled, Sequence
//   pre_tokenizer.cpp    make_pre_tokenizer   BertPreTokenizer, Whitespace, WhitespaceSplit, Metaspace, ByteLevel,
//                                             Split, Punctuation, Digits, Sequence
//   token_model.cpp      make_token_model     WordPiece, BPE, Unigram
//   post_processor.cpp   make_post_processor  BertProcessing, RobertaProcessing, TemplateProcessing, ByteLevel,
//                                             Sequence
// and, for turning ids back into text, the file's "decoder":
//   decoder.cpp          make_decoder         WordPiece, ByteLevel, Metaspace, BPEDecoder, ByteFallback, Fuse, Strip,
//                                             Replace, CTC, Sequence
// Components are immutable once made and are shared by every thread that encodes.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"
#include "text/tokenizer/normalized_string.hpp"

namespace accel::text {

// A token the model (or the added vocabulary) produced, offsets in bytes of the split's normalized text.
struct Token {
  std::int32_t id = 0;
  std::string value;  // the vocabulary entry
  Range offsets;
};

// One part of the text on its way through the pipeline: pre-tokenizers cut parts into smaller ones; a part whose
// tokens are set (an added token, or a part the model has tokenized) is left alone by later pre-tokenizers.
struct Split {
  NormalizedString text;
  std::optional<std::vector<Token>> tokens;
};

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(NormalizedString& text) const = 0;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces `splits` by their parts; splits whose tokens are set pass through unchanged, in place.
  virtual void pre_tokenize(std::vector<Split>& splits) const = 0;
};

class TokenModel {
 public:
  virtual ~TokenModel() = default;
  // Appends the tokens of one pre-tokenized part (never empty) to `out`, offsets within `text`.
  virtual void tokenize(std::string_view text, std::vector<Token>& out) const = 0;
  [[nodiscard]] virtual std::optional<std::int32_t> token_to_id(std::string_view token) const = 0;
  [[nodiscard]] virtual std::optional<std::string_view> id_to_token(std::int32_t id) const = 0;
  // One more than the largest id the model's vocabulary holds.
  [[nodiscard]] virtual std::size_t vocabulary_size() const = 0;
};

// The ids of one sequence, as the post-processor sees and extends them. Offsets are absolute original bytes.
struct Encoding;  // accel/text/tokenizer.hpp

// Moves `from`'s tokens onto the end of `to` (a post-processor's parts, or the two texts of a pair).
void append_encoding(Encoding& to, Encoding&& from);

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // How many special tokens process() adds to a single sequence (pair: two sequences); truncation leaves room.
  [[nodiscard]] virtual std::size_t added_tokens(bool pair) const = 0;
  // Adds the special tokens and sets type ids: `second` is null for a single sequence. The result replaces `first`.
  virtual void process(Encoding& first, const Encoding* second, bool add_special_tokens) const = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // tokenizers' decode_chain: the tokens (vocabulary entries, in id order) rewritten as text pieces; the decoded
  // text is the pieces joined with nothing between them.
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

// The vocabulary a post-processor or an added token refers to, so that a factory can refuse a token id or content
// the model does not have.
struct Vocabulary {
  const TokenModel* model = nullptr;
  // Added tokens (content → id) of the file's "added_tokens".
  std::vector<std::pair<std::string, std::int32_t>> added;
  [[nodiscard]] std::optional<std::int32_t> find(std::string_view content) const;
};

// `path` names the object in error messages, e.g. "normalizer.normalizers[2]".
Result<std::unique_ptr<Normalizer>> make_normalizer(const nlohmann::json& object, std::string_view path);
Result<std::unique_ptr<PreTokenizer>> make_pre_tokenizer(const nlohmann::json& object, std::string_view path);
Result<std::unique_ptr<TokenModel>> make_token_model(const nlohmann::json& object, std::string_view path);
Result<std::unique_ptr<Decoder>> make_decoder(const nlohmann::json& object, std::string_view path);
Result<std::unique_ptr<PostProcessor>> make_post_processor(const nlohmann::json& object, std::string_view path,
                                                           const Vocabulary& vocabulary);

}  // namespace accel::text

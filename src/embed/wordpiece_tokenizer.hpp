// accel::embed::WordPieceTokenizer — the tokenizer of BERT-family text-embedding models (all-MiniLM-L6-v2
// and its kin), loaded from the model's tokenizer.json and agreeing id for id with HuggingFace `tokenizers`
// (tests/embed/make_tokenizer_golden.py pins the version compared against).
//
//   ACCEL_ASSIGN_OR_RETURN(auto tokenizer, WordPieceTokenizer::load(folder / "tokenizer.json"));
//   ACCEL_ASSIGN_OR_RETURN(Encoding e, tokenizer.encode("Hello, world!", 256));  // [CLS] hello , world ! [SEP]
//
// A text goes through four stages, each named after its `tokenizers` counterpart: added tokens ([CLS],
// [MASK]...) are cut out of the raw text (AddedTokenMatcher), the rest is normalized (BertNormalizer), cut
// into words (BertPreTokenizer) and each word into vocabulary pieces (WordPieceModel); [CLS] and [SEP] go
// around the whole. Long texts are truncated to max_length ids, special tokens included, as sentence-
// transformers asks `tokenizers` to; nothing is ever padded. Tokenizing stops once a text is known to be
// too long, so a huge text costs little more than its first max_length tokens (and a scan for valid UTF-8).
//
// The tokenizer is immutable after loading: encode and encode_batch may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"
#include "embed/added_token_matcher.hpp"
#include "embed/bert_normalizer.hpp"
#include "embed/wordpiece_model.hpp"

namespace accel::embed {

struct Encoding {
  std::vector<std::int32_t> ids;  // [CLS] … [SEP]
  bool truncated = false;         // the text had more tokens than max_length left room for
};

class WordPieceTokenizer {
 public:
  // invalid_argument, naming the field and its value, for a tokenizer.json that is malformed or asks for
  // anything but the BERT pipeline (see embed/tokenizer_config.hpp).
  static Result<WordPieceTokenizer> load(const std::filesystem::path& tokenizer_json);
  static Result<WordPieceTokenizer> from_json(std::string_view tokenizer_json);

  // The ids of `utf8` between [CLS] and [SEP], at most max_length of them in all. invalid_argument when
  // the text is not valid UTF-8 (naming the byte) or max_length is below 2.
  [[nodiscard]] Result<Encoding> encode(std::string_view utf8, std::size_t max_length) const;

  // encode for each text, on up to `threads` host threads (0: one per hardware thread), in input order.
  // The error of an invalid text names its index (the lowest, when several are invalid).
  [[nodiscard]] Result<std::vector<Encoding>> encode_batch(std::span<const std::string> texts, std::size_t max_length,
                                                           unsigned threads) const;

  [[nodiscard]] std::int32_t cls_id() const noexcept { return cls_id_; }
  [[nodiscard]] std::int32_t sep_id() const noexcept { return sep_id_; }
  [[nodiscard]] std::int32_t unk_id() const noexcept { return model_.unk_id(); }

 private:
  // A thread's working buffers, reused from one text to the next.
  struct Scratch {
    std::vector<char32_t> normalized;
    std::vector<char32_t> cleaned;
    std::string word;
  };

  WordPieceTokenizer(BertNormalizer normalizer, AddedTokenMatcher added_tokens, WordPieceModel model,
                     std::int32_t cls_id, std::int32_t sep_id);

  Status encode_into(std::string_view utf8, std::size_t max_length, Scratch& scratch, Encoding& out) const;
  // Appends the ids of a stretch of text without added tokens; false once `ids` holds more than `limit`.
  bool append_words(std::string_view text, std::size_t limit, Scratch& scratch, std::vector<std::int32_t>& ids) const;

  BertNormalizer normalizer_;
  AddedTokenMatcher added_tokens_;
  WordPieceModel model_;
  std::int32_t cls_id_;
  std::int32_t sep_id_;
};

}  // namespace accel::embed

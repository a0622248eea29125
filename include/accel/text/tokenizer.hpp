/// @file
/// accel::text::Tokenizer — any HuggingFace tokenizer.json, run as `tokenizers` runs it: added tokens, then the
/// file's normalizer, pre-tokenizer, model (WordPiece, BPE or Unigram) and post-processor, agreeing with `tokenizers`
/// id for id and offset for offset (tests/text/ compares them on committed golden files).
///
/// @code
///   ACCEL_ASSIGN_OR_RETURN(auto tokenizer, accel::text::Tokenizer::load(folder / "tokenizer.json"));
///   ACCEL_ASSIGN_OR_RETURN(accel::text::Encoding e, tokenizer.encode("Hello, world!", {.max_length = 256}));
/// @endcode
///
/// The file's own "truncation" and "padding" are not applied: the caller states truncation in EncodeOptions, and
/// nothing is ever padded. A component type we do not implement is refused by name when the file loads.
/// A Tokenizer is immutable and cheap to copy; encode may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"

namespace accel::text {

/// A byte range [begin, end).
struct Range {
  std::size_t begin = 0;  ///< first byte
  std::size_t end = 0;    ///< one past the last byte
  /// Equal when every field is.
  friend bool operator==(const Range&, const Range&) = default;
};

/// Which end of a text truncation drops ids from: right drops the end, left the beginning.
enum class TruncationSide : std::uint8_t { right, left };

/// How encode() treats a text: special tokens, a length limit and where it cuts.
struct EncodeOptions {
  bool add_special_tokens = true;  ///< add the post-processor's special tokens ([CLS], [SEP], `<s>` ...)
  /// At most this many ids in all, special tokens included; 0: no limit. A pair is cut longest first.
  std::size_t max_length = 0;
  TruncationSide side = TruncationSide::right;  ///< which end loses ids when max_length cuts
};

/// A text's tokens: ids, and per id its type, vocabulary entry, byte offsets and flags.
struct Encoding {
  std::vector<std::int32_t> ids;                  ///< the token ids
  std::vector<std::int32_t> type_ids;             ///< the segment of each id (0, or 1 for the second text of a pair)
  std::vector<std::string> tokens;                ///< the vocabulary entry of each id
  std::vector<Range> offsets;                     ///< bytes of the text passed in; {0, 0} for added special tokens
  std::vector<std::uint8_t> special_tokens_mask;  ///< 1 where the post-processor added the token
  std::vector<std::uint32_t> sequence_ids;        ///< 0 or 1: which text of a pair; special tokens take their side's
  bool truncated = false;                         ///< ids were dropped to fit max_length
};

/// A HuggingFace tokenizer.json's pipeline, run as `transformers` runs it (see the file's description).
class Tokenizer {
 public:
  /// invalid_argument naming the file, the field and its value for a file that is malformed or names a component
  /// type we do not implement, or naming the path when the file cannot be read.
  static Result<Tokenizer> load(const std::filesystem::path& tokenizer_json);
  /// As load(), from the file's contents (the errors name no file).
  static Result<Tokenizer> from_json(std::string_view tokenizer_json);

  /// invalid_argument when a text is not valid UTF-8 (naming the byte), or max_length leaves no room for a token
  /// beside the special tokens.
  [[nodiscard]] Result<Encoding> encode(std::string_view utf8, const EncodeOptions& options = {}) const;
  /// The two texts as one sequence, as a cross-encoder reads a pair; a pair is cut longest first.
  [[nodiscard]] Result<Encoding> encode_pair(std::string_view first, std::string_view second,
                                             const EncodeOptions& options = {}) const;
  /// encode for each text, on up to `threads` host threads (0: one per hardware thread), in input order; the error
  /// of an invalid text names its index (the lowest, when several are invalid).
  [[nodiscard]] Result<std::vector<Encoding>> encode_batch(std::span<const std::string> texts,
                                                           const EncodeOptions& options, unsigned threads) const;
  /// encode_pair of `first` with each of `seconds`, likewise (a cross-encoder's query and passages); the error names
  /// the pair's index.
  [[nodiscard]] Result<std::vector<Encoding>> encode_pairs(std::string_view first, std::span<const std::string> seconds,
                                                           const EncodeOptions& options, unsigned threads) const;

  /// The text `ids` stand for, as `tokenizers`' decode gives it: each id's vocabulary entry or added token (ids
  /// that are neither are left out, and so are special added tokens when `skip_special_tokens`), rewritten by the
  /// file's "decoder" (WordPiece's "##", byte-level BPE's alphabet, SentencePiece's "▁" and byte pieces ...), or
  /// joined with spaces where the file has none. invalid_argument naming the decoder when the file's is one we do
  /// not run.
  [[nodiscard]] Result<std::string> decode(std::span<const std::int32_t> ids, bool skip_special_tokens = true) const;

  /// The id of a vocabulary entry or added token, if there is one.
  [[nodiscard]] std::optional<std::int32_t> token_to_id(std::string_view token) const;
  /// The vocabulary entry or added token of an id, if there is one.
  [[nodiscard]] std::optional<std::string> id_to_token(std::int32_t id) const;
  /// One more than the largest id the tokenizer can produce (model vocabulary and added tokens).
  [[nodiscard]] std::size_t vocabulary_size() const;
  /// The pipeline, one line: "normalizer=Sequence[Precompiled] pre_tokenizer=Metaspace model=Unigram(250002) ...".
  [[nodiscard]] std::string describe() const;

  struct Pipeline;  // text/tokenizer/pipeline.hpp

 private:
  explicit Tokenizer(std::shared_ptr<const Pipeline> pipeline) : pipeline_(std::move(pipeline)) {}
  std::shared_ptr<const Pipeline> pipeline_;
};

}  // namespace accel::text

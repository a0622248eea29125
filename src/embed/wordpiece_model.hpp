// accel::embed::WordPieceModel — splits one normalized, pre-tokenized word into vocabulary ids, greedily
// taking the longest piece in the vocabulary at each position, as `tokenizers`' models::WordPiece does: a
// piece after the first is looked up with the continuing-subword prefix ("##"), and a word with a position
// no piece matches, or with more than max_input_chars_per_word code points, becomes the one unknown token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "accel/core/result.hpp"

namespace accel::embed {

class WordPieceModel {
 public:
  struct Options {
    std::string unk_token = "[UNK]";
    std::string continuing_subword_prefix = "##";
    std::size_t max_input_chars_per_word = 100;
  };

  // invalid_argument when the unknown token is not in `vocabulary`.
  static Result<WordPieceModel> build(std::vector<std::pair<std::string, std::int32_t>> vocabulary, Options options);

  // Appends the ids of `word` (UTF-8, not empty) to `ids`.
  void append_ids(std::string_view word, std::vector<std::int32_t>& ids) const;

  [[nodiscard]] std::int32_t unk_id() const noexcept { return unk_id_; }
  [[nodiscard]] std::size_t size() const noexcept { return pieces_.size(); }

 private:
  // Heterogeneous lookup: pieces are looked up as views into the word, never copied into a string.
  // Deliberately not noexcept: libstdc++ then keeps each node's hash, so a lookup walking a bucket compares
  // hashes instead of rehashing every key it passes (half the tokenizer's time on the golden corpus).
  struct PieceHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view piece) const { return std::hash<std::string_view>{}(piece); }
  };
  using PieceMap = std::unordered_map<std::string, std::int32_t, PieceHash, std::equal_to<>>;

  WordPieceModel() = default;

  // The id of the longest piece of `word` starting at byte `start` (`map` and `longest` say which kind of
  // piece), and the byte where it ends; {-1, start} when none matches.
  [[nodiscard]] std::pair<std::int32_t, std::size_t> longest_piece(std::string_view word, std::size_t start,
                                                                   const PieceMap& map, std::size_t longest) const;

  PieceMap pieces_;                // every vocabulary entry, for the first piece of a word
  PieceMap continuations_;         // the entries that start with the prefix, keyed without it, for later pieces
  std::size_t longest_piece_ = 0;  // bytes; no longer piece of a word can match
  std::size_t longest_continuation_ = 0;
  std::int32_t unk_id_ = 0;
  std::size_t max_input_chars_per_word_ = 0;
};

}  // namespace accel::embed

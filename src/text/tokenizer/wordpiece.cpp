#include "text/tokenizer/wordpiece.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "text/tokenizer/json_fields.hpp"
#include "text/tokenizer/piece_table.hpp"

namespace accel::text {
namespace {

bool is_continuation_byte(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

// tokenizers counts max_input_chars_per_word in code points (Rust chars), not bytes.
std::size_t code_points(std::string_view utf8) {
  return static_cast<std::size_t>(
      std::count_if(utf8.begin(), utf8.end(), [](char byte) { return !is_continuation_byte(byte); }));
}

class WordPiece final : public TokenModel {
 public:
  WordPiece(PieceTable vocab, std::uint32_t unk, std::string_view prefix, std::size_t max_input_chars_per_word)
      : vocab_(std::move(vocab)), unk_(unk), max_input_chars_per_word_(max_input_chars_per_word) {
    for (std::uint32_t index = 0; index < vocab_.size(); ++index) {
      const std::string_view piece = vocab_.piece(index);
      longest_start_ = std::max(longest_start_, piece.size());
      // Without a prefix every entry continues a word as well as it starts one.
      if (piece.starts_with(prefix)) {
        const std::string_view rest = piece.substr(prefix.size());
        continuations_.emplace(rest, index);
        longest_continuation_ = std::max(longest_continuation_, rest.size());
      }
    }
  }

  void tokenize(std::string_view text, std::vector<Token>& out) const override {
    const std::size_t first = out.size();
    if (code_points(text) <= max_input_chars_per_word_) {
      std::size_t start = 0;
      while (start < text.size()) {
        const auto [index, end] = start == 0 ? longest_piece(text, start, vocab_.index(), longest_start_)
                                             : longest_piece(text, start, continuations_, longest_continuation_);
        if (!index) break;
        out.push_back(Token{vocab_.id(*index), vocab_.piece(*index), Range{start, end}});
        start = end;
      }
      if (start == text.size()) return;
    }
    out.resize(first);
    out.push_back(Token{vocab_.id(unk_), vocab_.piece(unk_), Range{0, text.size()}});
  }

  [[nodiscard]] std::optional<std::int32_t> token_to_id(std::string_view token) const override {
    return vocab_.token_to_id(token);
  }
  [[nodiscard]] std::optional<std::string_view> id_to_token(std::int32_t id) const override {
    return vocab_.id_to_token(id);
  }
  [[nodiscard]] std::size_t vocabulary_size() const override { return vocab_.vocabulary_size(); }

 private:
  // The longest piece of `map` (pieces of at most `longest` bytes) that starts at byte `start` of `word`, and the
  // byte where it ends.
  static std::pair<std::optional<std::uint32_t>, std::size_t> longest_piece(std::string_view word, std::size_t start,
                                                                            const PieceIndex& map,
                                                                            std::size_t longest) {
    std::size_t end = start + std::min(word.size() - start, longest);
    while (end > start && end < word.size() && is_continuation_byte(word[end])) --end;
    while (end > start) {
      if (const auto found = map.find(word.substr(start, end - start))) return {*found, end};
      do {
        --end;
      } while (end > start && is_continuation_byte(word[end]));
    }
    return {std::nullopt, start};
  }

  PieceTable vocab_;
  PieceIndex continuations_;       // the entries that start with the prefix, keyed without it, for later pieces
  std::size_t longest_start_ = 0;  // bytes; no longer piece can match
  std::size_t longest_continuation_ = 0;
  std::uint32_t unk_;
  std::size_t max_input_chars_per_word_;
};

}  // namespace

Result<std::unique_ptr<TokenModel>> make_wordpiece(const nlohmann::json& object, std::string_view path) {
  using namespace json_fields;
  // tokenizers requires all four fields, "type" or not.
  ACCEL_ASSIGN_OR_RETURN(const json* vocab_json, member(object, path, "vocab"));
  ACCEL_ASSIGN_OR_RETURN(PieceTable vocab, PieceTable::from_json(*vocab_json, child(path, "vocab")));
  ACCEL_ASSIGN_OR_RETURN(const std::string unk_token, string_member(object, path, "unk_token"));
  ACCEL_ASSIGN_OR_RETURN(const std::string prefix, string_member(object, path, "continuing_subword_prefix"));
  ACCEL_ASSIGN_OR_RETURN(const std::uint64_t max_chars, count_member(object, path, "max_input_chars_per_word",
                                                                     std::numeric_limits<std::size_t>::max()));
  // tokenizers fails only when a word needs the unknown token; we cannot fail then, so we refuse the file.
  const auto unk = vocab.index_of(unk_token);
  if (!unk) return refused(child(path, "unk_token"), unk_token, "the unknown token is not in the vocabulary");
  return std::unique_ptr<TokenModel>(
      std::make_unique<WordPiece>(std::move(vocab), *unk, prefix, static_cast<std::size_t>(max_chars)));
}

}  // namespace accel::text

#include "embed/wordpiece_model.hpp"

#include <algorithm>
#include <string>

namespace accel::embed {
namespace {

bool is_continuation_byte(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

// `tokenizers` counts max_input_chars_per_word in code points (Rust chars), not bytes.
std::size_t code_points(std::string_view utf8) {
  return static_cast<std::size_t>(
      std::count_if(utf8.begin(), utf8.end(), [](char b) { return !is_continuation_byte(b); }));
}

}  // namespace

Result<WordPieceModel> WordPieceModel::build(std::vector<std::pair<std::string, std::int32_t>> vocabulary,
                                             Options options) {
  WordPieceModel model;
  model.max_input_chars_per_word_ = options.max_input_chars_per_word;
  model.pieces_.reserve(vocabulary.size());
  for (auto& [piece, id] : vocabulary) {
    if (id < 0) return invalid_argument("the vocabulary gives '" + piece + "' the negative id " + std::to_string(id));
    if (!options.continuing_subword_prefix.empty() && piece.starts_with(options.continuing_subword_prefix)) {
      std::string rest = piece.substr(options.continuing_subword_prefix.size());
      model.longest_continuation_ = std::max(model.longest_continuation_, rest.size());
      model.continuations_.insert_or_assign(std::move(rest), id);
    }
    model.longest_piece_ = std::max(model.longest_piece_, piece.size());
    model.pieces_.insert_or_assign(std::move(piece), id);
  }
  // Without a prefix every entry continues a word as well as it starts one.
  if (options.continuing_subword_prefix.empty()) {
    model.continuations_ = model.pieces_;
    model.longest_continuation_ = model.longest_piece_;
  }
  const auto unk = model.pieces_.find(std::string_view(options.unk_token));
  if (unk == model.pieces_.end()) {
    return invalid_argument("the unknown token '" + options.unk_token + "' is not in the vocabulary");
  }
  model.unk_id_ = unk->second;
  return model;
}

std::pair<std::int32_t, std::size_t> WordPieceModel::longest_piece(std::string_view word, std::size_t start,
                                                                   const PieceMap& map, std::size_t longest) const {
  std::size_t end = std::min(word.size(), start + longest);
  while (end > start && end < word.size() && is_continuation_byte(word[end])) --end;
  while (end > start) {
    const auto found = map.find(word.substr(start, end - start));
    if (found != map.end()) return {found->second, end};
    do {
      --end;
    } while (end > start && is_continuation_byte(word[end]));
  }
  return {-1, start};
}

void WordPieceModel::append_ids(std::string_view word, std::vector<std::int32_t>& ids) const {
  if (code_points(word) > max_input_chars_per_word_) {
    ids.push_back(unk_id_);
    return;
  }
  const std::size_t first = ids.size();
  std::size_t start = 0;
  while (start < word.size()) {
    const auto [id, end] = start == 0 ? longest_piece(word, start, pieces_, longest_piece_)
                                      : longest_piece(word, start, continuations_, longest_continuation_);
    if (id < 0) {
      ids.resize(first);
      ids.push_back(unk_id_);
      return;
    }
    ids.push_back(id);
    start = end;
  }
}

}  // namespace accel::embed

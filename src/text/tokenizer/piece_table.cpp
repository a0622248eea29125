#include "text/tokenizer/piece_table.hpp"

#include <algorithm>
#include <utility>

#include "text/tokenizer/json_fields.hpp"

namespace accel::text {

Result<PieceTable> PieceTable::from_json(const nlohmann::json& vocab, std::string_view path) {
  if (!vocab.is_object() || vocab.empty()) {
    return json_fields::refused(path, vocab, "expected a non-empty object of piece → token id");
  }
  std::vector<std::pair<std::int32_t, std::string>> entries;
  entries.reserve(vocab.size());
  for (const auto& [piece, id_value] : vocab.items()) {
    ACCEL_ASSIGN_OR_RETURN(const std::int32_t id, json_fields::token_id(id_value, json_fields::child(path, piece)));
    entries.emplace_back(id, piece);
  }
  std::sort(entries.begin(), entries.end());
  PieceTable table;
  table.pieces_.reserve(entries.size());
  table.ids_.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i > 0 && entries[i].first == entries[i - 1].first) {
      return json_fields::refused(json_fields::child(path, entries[i].second), entries[i].first,
                                  "the id is also given to \"" + table.pieces_.back() + "\"");
    }
    table.ids_.push_back(entries[i].first);
    table.pieces_.push_back(std::move(entries[i].second));
  }
  table.index_of_.reserve(table.pieces_.size());
  for (std::uint32_t index = 0; index < table.pieces_.size(); ++index) {
    table.index_of_.emplace(table.pieces_[index], index);
  }
  return table;
}

std::optional<std::uint32_t> PieceTable::index_of(std::string_view piece) const {
  const auto found = index_of_.find(piece);
  if (found == index_of_.end()) return std::nullopt;
  return found->second;
}

std::optional<std::uint32_t> PieceTable::index_of_id(std::int32_t id) const {
  const auto found = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (found == ids_.end() || *found != id) return std::nullopt;
  return static_cast<std::uint32_t>(found - ids_.begin());
}

std::string byte_fallback_piece(unsigned char byte) {
  constexpr char kHex[] = "0123456789ABCDEF";
  return std::string("<0x") + kHex[byte >> 4] + kHex[byte & 0xF] + ">";
}

}  // namespace accel::text

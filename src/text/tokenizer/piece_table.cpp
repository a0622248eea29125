#include "text/tokenizer/piece_table.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <utility>

#include "text/tokenizer/json_fields.hpp"

namespace accel::text {
namespace {

std::size_t hash_of(std::string_view piece) { return std::hash<std::string_view>{}(piece); }
std::uint32_t tag_of(std::size_t hash) { return static_cast<std::uint32_t>(static_cast<std::uint64_t>(hash) >> 32); }

}  // namespace

void PieceIndex::reserve(std::size_t count) {
  if (2 * count > slots_.size()) rehash(std::bit_ceil(std::max<std::size_t>(2 * count, 16)));
}

void PieceIndex::emplace(std::string_view piece, std::uint32_t index) {
  reserve(entries_.size() + 1);
  const std::size_t hash = hash_of(piece), mask = slots_.size() - 1;
  const std::uint32_t tag = tag_of(hash);
  std::size_t at = hash & mask;
  for (; slots_[at].entry != kEmpty; at = (at + 1) & mask)
    if (slots_[at].tag == tag && entries_[slots_[at].entry].piece == piece) return;
  entries_.push_back(Entry{piece, index});
  slots_[at] = Slot{tag, static_cast<std::uint32_t>(entries_.size() - 1)};
}

std::optional<std::uint32_t> PieceIndex::find(std::string_view piece) const {
  if (slots_.empty()) return std::nullopt;
  const std::size_t hash = hash_of(piece), mask = slots_.size() - 1;
  const std::uint32_t tag = tag_of(hash);
  for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
    const Slot slot = slots_[at];
    if (slot.entry == kEmpty) return std::nullopt;
    if (slot.tag == tag && entries_[slot.entry].piece == piece) return entries_[slot.entry].index;
  }
}

void PieceIndex::place(std::size_t hash, std::uint32_t entry) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t at = hash & mask;
  while (slots_[at].entry != kEmpty) at = (at + 1) & mask;
  slots_[at] = Slot{tag_of(hash), entry};
}

void PieceIndex::rehash(std::size_t slots) {
  slots_.assign(slots, Slot{});
  for (std::uint32_t entry = 0; entry < entries_.size(); ++entry) place(hash_of(entries_[entry].piece), entry);
}

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

std::optional<std::uint32_t> PieceTable::index_of(std::string_view piece) const { return index_of_.find(piece); }

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

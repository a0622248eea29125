// The {piece: id} vocabulary of a WordPiece or BPE model as tokenizer.json gives it, kept in id order so that a
// model can work with dense indices (0..size()-1) whatever holes the ids leave.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"

namespace accel::text {

// A {piece: index} table of views into storage its owner keeps unchanged while the table lives, filled once and then
// only read: open addressing over one array of (hash tag, entry) slots at most half full. WordPiece tries the longest
// prefixes of a word first, so most of its lookups miss; here a miss reads a run of slots and no key, where
// std::unordered_map read a bucket, its nodes and their keys (14-19 % of WordPiece's samples in that form).
class PieceIndex {
 public:
  // Room for `count` pieces without growing.
  void reserve(std::size_t count);
  // Adds `piece` → `index` unless `piece` is there already (the first stays).
  void emplace(std::string_view piece, std::uint32_t index);
  [[nodiscard]] std::optional<std::uint32_t> find(std::string_view piece) const;
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  struct Slot {
    std::uint32_t tag = 0;         // the hash's high half
    std::uint32_t entry = kEmpty;  // into entries_
  };
  struct Entry {
    std::string_view piece;
    std::uint32_t index;
  };
  void place(std::size_t hash, std::uint32_t entry);
  void rehash(std::size_t slots);

  std::vector<Slot> slots_;  // a power of two, or empty
  std::vector<Entry> entries_;
};

class PieceTable {
 public:
  // `vocab` (at `path`) must be a non-empty object of string → token id, each id used once.
  static Result<PieceTable> from_json(const nlohmann::json& vocab, std::string_view path);

  PieceTable(PieceTable&&) noexcept = default;
  PieceTable& operator=(PieceTable&&) noexcept = default;
  PieceTable(const PieceTable&) = delete;  // the map's keys point into pieces_
  PieceTable& operator=(const PieceTable&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return pieces_.size(); }
  [[nodiscard]] const std::string& piece(std::uint32_t index) const noexcept { return pieces_[index]; }
  [[nodiscard]] std::int32_t id(std::uint32_t index) const noexcept { return ids_[index]; }
  [[nodiscard]] std::optional<std::uint32_t> index_of(std::string_view piece) const;
  // Every piece → its index, for a model that looks pieces up in a loop of its own.
  [[nodiscard]] const PieceIndex& index() const noexcept { return index_of_; }
  [[nodiscard]] std::optional<std::uint32_t> index_of_id(std::int32_t id) const;
  // TokenModel's two lookups, for the models that keep their vocabulary here.
  [[nodiscard]] std::optional<std::int32_t> token_to_id(std::string_view piece) const {
    const auto index = index_of(piece);
    return index ? std::optional(id(*index)) : std::nullopt;
  }
  [[nodiscard]] std::optional<std::string_view> id_to_token(std::int32_t token_id) const {
    const auto index = index_of_id(token_id);
    return index ? std::optional<std::string_view>(piece(*index)) : std::nullopt;
  }
  // One more than the largest id.
  [[nodiscard]] std::size_t vocabulary_size() const noexcept {
    return ids_.empty() ? 0 : static_cast<std::size_t>(ids_.back()) + 1;
  }

 private:
  PieceTable() = default;

  std::vector<std::string> pieces_;  // ascending id
  std::vector<std::int32_t> ids_;
  PieceIndex index_of_;
};

// "<0xXX>": the piece byte fallback (BPE, Unigram) gives a byte no piece covers.
[[nodiscard]] std::string byte_fallback_piece(unsigned char byte);

}  // namespace accel::text

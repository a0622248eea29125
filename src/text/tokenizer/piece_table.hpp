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
#include <unordered_map>
#include <vector>

#include "accel/core/result.hpp"

namespace accel::text {

// Deliberately not noexcept: libstdc++ then keeps each node's hash, so a lookup walking a bucket compares hashes
// instead of rehashing every key it passes.
struct PieceHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view piece) const { return std::hash<std::string_view>{}(piece); }
};
// Keys are views into storage the owner keeps unchanged for the map's lifetime.
using PieceIndexMap = std::unordered_map<std::string_view, std::uint32_t, PieceHash, std::equal_to<>>;

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
  PieceIndexMap index_of_;
};

// "<0xXX>": the piece byte fallback (BPE, Unigram) gives a byte no piece covers.
[[nodiscard]] std::string byte_fallback_piece(unsigned char byte);

}  // namespace accel::text

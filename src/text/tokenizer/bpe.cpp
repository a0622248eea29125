#include "text/tokenizer/bpe.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "text/tokenizer/json_fields.hpp"
#include "text/tokenizer/piece_table.hpp"
#include "text/tokenizer/utf8.hpp"

namespace accel::text {
namespace {

struct MergeRule {
  std::uint32_t rank = 0;
  std::uint32_t merged = 0;  // piece index
};
// Keyed by the two piece indices, left << 32 | right.
using MergeMap = std::unordered_map<std::uint64_t, MergeRule>;

std::uint64_t pair_key(std::uint32_t left, std::uint32_t right) {
  return (static_cast<std::uint64_t>(left) << 32) | right;
}

struct BpeOptions {
  std::optional<std::uint32_t> unk;
  std::string prefix;  // continuing_subword_prefix; "" when null
  std::string suffix;  // end_of_word_suffix; "" when null
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
};

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// A piece of the word being merged, in a linked list over the initial pieces; a merged-away piece has len 0.
struct Symbol {
  std::uint32_t piece = 0;
  std::size_t prev = kNone;
  std::size_t next = kNone;
  std::size_t len = 0;  // bytes of the word it stands for
};

struct PendingMerge {
  std::uint32_t rank = 0;
  std::size_t pos = 0;
  std::uint32_t merged = 0;
  // std::push_heap keeps the greatest on top: the lowest rank, then the leftmost position.
  friend bool operator<(const PendingMerge& a, const PendingMerge& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  }
};

// Per thread, so that tokenizing a word allocates nothing once the buffers have grown.
struct Scratch {
  std::vector<Symbol> symbols;
  std::vector<PendingMerge> heap;
  std::string key;
};

class Bpe final : public TokenModel {
 public:
  Bpe(PieceTable vocab, MergeMap merges, BpeOptions options)
      : vocab_(std::move(vocab)), merges_(std::move(merges)), options_(std::move(options)) {
    for (unsigned byte = 0; byte < byte_pieces_.size(); ++byte) {
      byte_pieces_[byte] = vocab_.index_of(byte_fallback_piece(static_cast<unsigned char>(byte)));
    }
  }

  void tokenize(std::string_view text, std::vector<Token>& out) const override {
    if (text.empty()) return;
    if (options_.ignore_merges) {
      if (const auto whole = vocab_.index_of(text)) {
        out.push_back(Token{vocab_.id(*whole), vocab_.piece(*whole), Range{0, text.size()}});
        return;
      }
    }
    thread_local Scratch scratch;
    initial_symbols(text, scratch);
    merge_all(scratch);
    // Offsets add up the lengths as tokenizers does (a dropped unknown code point shifts the ones after it);
    // byte fallback over a prefix or suffix counts its bytes too, which we keep within the word.
    std::size_t position = 0;
    for (const Symbol& symbol : scratch.symbols) {
      if (symbol.len == 0) continue;
      const Range offsets{std::min(position, text.size()), std::min(position + symbol.len, text.size())};
      out.push_back(Token{vocab_.id(symbol.piece), vocab_.piece(symbol.piece), offsets});
      position += symbol.len;
    }
  }

  [[nodiscard]] std::optional<std::int32_t> token_to_id(std::string_view token) const override {
    return vocab_.token_to_id(token);
  }
  [[nodiscard]] std::optional<std::string_view> id_to_token(std::int32_t id) const override {
    return vocab_.id_to_token(id);
  }
  [[nodiscard]] std::size_t vocabulary_size() const override { return vocab_.vocabulary_size(); }

 private:
  static void add(std::vector<Symbol>& symbols, std::uint32_t piece, std::size_t len) {
    const std::size_t position = symbols.size();
    if (!symbols.empty()) symbols.back().next = position;
    symbols.push_back(Symbol{piece, symbols.empty() ? kNone : position - 1, kNone, len});
  }

  void initial_symbols(std::string_view text, Scratch& scratch) const {
    std::vector<Symbol>& symbols = scratch.symbols;
    symbols.clear();
    std::optional<Symbol> pending_unk;
    for (std::size_t start = 0; start < text.size();) {
      const std::size_t len =
          std::min(utf8::sequence_length(static_cast<unsigned char>(text[start])), text.size() - start);
      const bool first = start == 0;
      const bool last = start + len == text.size();
      std::string_view key = text.substr(start, len);
      if ((!first && !options_.prefix.empty()) || (last && !options_.suffix.empty())) {
        scratch.key.assign(first ? std::string_view() : std::string_view(options_.prefix));
        scratch.key.append(key);
        if (last) scratch.key.append(options_.suffix);
        key = scratch.key;
      }
      start += len;
      if (const auto index = vocab_.index_of(key)) {
        if (pending_unk) add(symbols, pending_unk->piece, pending_unk->len);
        pending_unk.reset();
        add(symbols, *index, len);
        continue;
      }
      // tokenizers adds the byte pieces at once, ahead of an unknown token still pending: so do we.
      if (options_.byte_fallback && std::all_of(key.begin(), key.end(), [this](char byte) {
            return byte_pieces_[static_cast<unsigned char>(byte)].has_value();
          })) {
        for (const char byte : key) add(symbols, *byte_pieces_[static_cast<unsigned char>(byte)], 1);
        continue;
      }
      if (!options_.unk) continue;
      if (pending_unk && options_.fuse_unk) {
        pending_unk->len += len;
      } else {
        if (pending_unk) add(symbols, pending_unk->piece, pending_unk->len);
        pending_unk = Symbol{*options_.unk, kNone, kNone, len};
      }
    }
    if (pending_unk) add(symbols, pending_unk->piece, pending_unk->len);
  }

  [[nodiscard]] const MergeRule* rule(std::uint32_t left, std::uint32_t right) const {
    const auto found = merges_.find(pair_key(left, right));
    return found == merges_.end() ? nullptr : &found->second;
  }

  void push(std::vector<PendingMerge>& heap, std::size_t pos, const MergeRule& merge) const {
    heap.push_back(PendingMerge{merge.rank, pos, merge.merged});
    std::push_heap(heap.begin(), heap.end());
  }

  // tokenizers' Word::merge_all without dropout: a queue of candidate merges by rank; an entry whose pair has
  // changed since it was queued is skipped when its rule no longer gives the same piece.
  void merge_all(Scratch& scratch) const {
    std::vector<Symbol>& symbols = scratch.symbols;
    std::vector<PendingMerge>& heap = scratch.heap;
    heap.clear();
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      if (const MergeRule* merge = rule(symbols[i].piece, symbols[i + 1].piece)) {
        heap.push_back(PendingMerge{merge->rank, i, merge->merged});
      }
    }
    std::make_heap(heap.begin(), heap.end());
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end());
      const PendingMerge top = heap.back();
      heap.pop_back();
      Symbol& current = symbols[top.pos];
      if (current.len == 0 || current.next == kNone) continue;
      const Symbol right = symbols[current.next];
      const MergeRule* merge = rule(current.piece, right.piece);
      if (merge == nullptr || merge->merged != top.merged) continue;
      symbols[current.next].len = 0;
      current.piece = top.merged;
      current.len += right.len;
      current.next = right.next;
      if (right.next != kNone) symbols[right.next].prev = top.pos;
      if (current.prev != kNone) {
        if (const MergeRule* left = rule(symbols[current.prev].piece, current.piece)) push(heap, current.prev, *left);
      }
      if (current.next != kNone) {
        if (const MergeRule* after = rule(current.piece, symbols[current.next].piece)) push(heap, top.pos, *after);
      }
    }
  }

  PieceTable vocab_;
  MergeMap merges_;
  BpeOptions options_;
  std::array<std::optional<std::uint32_t>, 256> byte_pieces_;
};

// The two pieces of merges[i]: "left right" (the older form) or ["left", "right"].
Result<std::pair<std::string_view, std::string_view>> merge_pieces(const json_fields::json& entry, bool legacy,
                                                                   std::string_view path) {
  if (legacy) {
    if (!entry.is_string()) return json_fields::refused(path, entry, "expected \"left right\" like merges[0]");
    const std::string& text = entry.get_ref<const std::string&>();
    const std::size_t space = text.find(' ');
    if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
      return json_fields::refused(path, entry, "expected two pieces separated by one space");
    }
    return std::pair{std::string_view(text).substr(0, space), std::string_view(text).substr(space + 1)};
  }
  if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_string()) {
    return json_fields::refused(path, entry, "expected a pair [\"left\", \"right\"] like merges[0]");
  }
  return std::pair{std::string_view(entry[0].get_ref<const std::string&>()),
                   std::string_view(entry[1].get_ref<const std::string&>())};
}

Result<MergeMap> read_merges(const json_fields::json& merges, std::string_view path, const PieceTable& vocab,
                             std::string_view prefix) {
  using namespace json_fields;
  if (!merges.is_array()) return refused(path, merges, "expected an array of merges");
  const bool legacy = !merges.empty() && merges[0].is_string();
  MergeMap map;
  map.reserve(merges.size());
  std::uint32_t rank = 0;
  std::string merged;
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const std::string entry_path = indexed(path, i);
    if (legacy && merges[i].is_string() && merges[i].get_ref<const std::string&>().starts_with("#version")) continue;
    ACCEL_ASSIGN_OR_RETURN(const auto pieces, merge_pieces(merges[i], legacy, entry_path));
    const auto [left_piece, right_piece] = pieces;
    const auto left = vocab.index_of(left_piece);
    const auto right = vocab.index_of(right_piece);
    // The merged piece drops as many bytes from the right piece as the prefix has, as tokenizers does.
    if (!left || !right || right_piece.size() < prefix.size()) {
      return refused(entry_path, merges[i],
                     "\"" + std::string(!left ? left_piece : right_piece) + "\" is not in the vocabulary");
    }
    merged.assign(left_piece).append(right_piece.substr(prefix.size()));
    const auto merged_index = vocab.index_of(merged);
    if (!merged_index) return refused(entry_path, merges[i], "\"" + merged + "\" is not in the vocabulary");
    // A pair listed twice keeps the later rank (tokenizers builds a map from the list).
    map.insert_or_assign(pair_key(*left, *right), MergeRule{rank++, *merged_index});
  }
  return map;
}

}  // namespace

Result<std::unique_ptr<TokenModel>> make_bpe(const nlohmann::json& object, std::string_view path) {
  using namespace json_fields;
  ACCEL_ASSIGN_OR_RETURN(const json* dropout, optional_member(object, path, "dropout"));
  if (dropout != nullptr && !(dropout->is_number() && dropout->get<double>() == 0.0)) {
    return refused(child(path, "dropout"), *dropout, "expected null or 0: we tokenize deterministically");
  }
  ACCEL_ASSIGN_OR_RETURN(const json* vocab_json, member(object, path, "vocab"));
  ACCEL_ASSIGN_OR_RETURN(PieceTable vocab, PieceTable::from_json(*vocab_json, child(path, "vocab")));
  BpeOptions options;
  ACCEL_ASSIGN_OR_RETURN(options.prefix, string_member_or(object, path, "continuing_subword_prefix", ""));
  ACCEL_ASSIGN_OR_RETURN(options.suffix, string_member_or(object, path, "end_of_word_suffix", ""));
  ACCEL_ASSIGN_OR_RETURN(options.fuse_unk, bool_member_or(object, path, "fuse_unk", false));
  ACCEL_ASSIGN_OR_RETURN(options.byte_fallback, bool_member_or(object, path, "byte_fallback", false));
  ACCEL_ASSIGN_OR_RETURN(options.ignore_merges, bool_member_or(object, path, "ignore_merges", false));
  ACCEL_ASSIGN_OR_RETURN(const json* unk_token, optional_member(object, path, "unk_token"));
  if (unk_token != nullptr) {
    if (!unk_token->is_string()) return refused(child(path, "unk_token"), *unk_token, "expected a string or null");
    // tokenizers fails only when a word needs the unknown token; we cannot fail then, so we refuse the file.
    options.unk = vocab.index_of(unk_token->get_ref<const std::string&>());
    if (!options.unk) {
      return refused(child(path, "unk_token"), *unk_token, "the unknown token is not in the vocabulary");
    }
  }
  ACCEL_ASSIGN_OR_RETURN(const json* merges_json, member(object, path, "merges"));
  ACCEL_ASSIGN_OR_RETURN(MergeMap merges, read_merges(*merges_json, child(path, "merges"), vocab, options.prefix));
  return std::unique_ptr<TokenModel>(std::make_unique<Bpe>(std::move(vocab), std::move(merges), std::move(options)));
}

}  // namespace accel::text

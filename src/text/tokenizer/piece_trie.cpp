#include "text/tokenizer/piece_trie.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace accel::text {
namespace {

// The first 8 bytes of a piece as a big-endian number (zeros past its end): ordering by it first and by the whole
// piece where it ties agrees with ordering by the piece, and spares most comparisons a call to memcmp.
std::uint64_t leading_bytes(std::string_view piece) {
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < 8; ++i) key = (key << 8) | (i < piece.size() ? static_cast<unsigned char>(piece[i]) : 0u);
  return key;
}

struct SortEntry {
  std::uint64_t leading = 0;
  std::string_view piece;
  std::uint32_t index = 0;
  friend bool operator<(const SortEntry& a, const SortEntry& b) {
    if (a.leading != b.leading) return a.leading < b.leading;
    if (const int order = a.piece.compare(b.piece); order != 0) return order < 0;
    return a.index < b.index;
  }
};

}  // namespace

Result<PieceTrie> PieceTrie::build(const std::vector<std::string>& pieces) {
  std::size_t total_bytes = 0;
  for (const std::string& piece : pieces) total_bytes += piece.size();
  if (pieces.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()) ||
      total_bytes >= std::numeric_limits<std::uint32_t>::max()) {
    return invalid_argument("the vocabulary is too large for a trie (" + std::to_string(pieces.size()) + " pieces, " +
                            std::to_string(total_bytes) + " bytes)");
  }
  // Sorted, pieces sharing a prefix are consecutive, and equal pieces are in index order (the last one wins).
  std::vector<SortEntry> sorted;
  sorted.reserve(pieces.size());
  for (std::uint32_t i = 0; i < pieces.size(); ++i) sorted.push_back(SortEntry{leading_bytes(pieces[i]), pieces[i], i});
  std::sort(sorted.begin(), sorted.end());
  const auto byte_at = [&](std::uint32_t piece, std::size_t depth) {
    return static_cast<unsigned char>(sorted[piece].piece[depth]);
  };

  PieceTrie trie;
  const auto add_node = [&trie](unsigned char label) {
    trie.nodes_.emplace_back();
    trie.labels_.push_back(label);
  };
  add_node(0);
  // Depth first over ranges of `sorted` that share their first `depth` bytes; a node's children are all added
  // when the node is reached, so that they are consecutive. An explicit stack: pieces may be very long.
  struct Group {
    std::uint32_t node, begin, end;
    std::size_t depth;
  };
  std::vector<Group> stack{{0, 0, static_cast<std::uint32_t>(sorted.size()), 0}};
  while (!stack.empty()) {
    auto [node, begin, end, depth] = stack.back();
    stack.pop_back();
    for (; begin < end && sorted[begin].piece.size() == depth; ++begin) {
      trie.nodes_[node].value = static_cast<std::int32_t>(sorted[begin].index);
    }
    if (begin == end) continue;
    trie.nodes_[node].first_child = static_cast<std::uint32_t>(trie.nodes_.size());
    std::uint32_t group = begin;
    while (group < end) {
      const unsigned char label = byte_at(group, depth);
      std::uint32_t group_end = group + 1;
      while (group_end < end && byte_at(group_end, depth) == label) ++group_end;
      const auto child_node = static_cast<std::uint32_t>(trie.nodes_.size());
      add_node(label);
      ++trie.nodes_[node].child_count;
      stack.push_back(Group{child_node, group, group_end, depth + 1});
      group = group_end;
    }
  }
  return trie;
}

std::int32_t PieceTrie::find(std::string_view piece) const noexcept {
  std::uint32_t node = 0;
  for (const char byte : piece) {
    node = child(node, static_cast<unsigned char>(byte));
    if (node == kNoNode) return -1;
  }
  return piece.empty() ? -1 : nodes_[node].value;
}

}  // namespace accel::text

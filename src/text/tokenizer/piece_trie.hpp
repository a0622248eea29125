// A byte trie over a Unigram vocabulary's pieces, to find every piece that starts at a position of the text in
// one walk. Flat arrays: a node's children are consecutive nodes sorted by byte, so that a vocabulary of 250,000
// pieces takes a few megabytes and builds in tens of milliseconds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/result.hpp"

namespace accel::text {

class PieceTrie {
 public:
  PieceTrie() = default;
  // Piece i gets value i; of equal pieces the last one wins. An empty piece is never found.
  static Result<PieceTrie> build(const std::vector<std::string>& pieces);

  // Calls found(end, value) for every piece that is a prefix of text[start, ...), shortest first; `end` is the
  // byte of `text` where that piece ends.
  template <class Found>
  void for_each_prefix(std::string_view text, std::size_t start, Found&& found) const {
    std::uint32_t node = 0;
    for (std::size_t i = start; i < text.size(); ++i) {
      node = child(node, static_cast<unsigned char>(text[i]));
      if (node == kNoNode) return;
      if (nodes_[node].value >= 0) found(i + 1, nodes_[node].value);
    }
  }

  // The value of the piece equal to `piece`, or -1.
  [[nodiscard]] std::int32_t find(std::string_view piece) const noexcept;

 private:
  static constexpr std::uint32_t kNoNode = 0;  // the root is never anyone's child

  struct Node {
    std::uint32_t first_child = 0;  // its children are nodes [first_child, first_child + child_count)
    std::int32_t value = -1;        // of the piece ending here, or -1
    std::uint16_t child_count = 0;
  };

  [[nodiscard]] std::uint32_t child(std::uint32_t node, unsigned char byte) const noexcept {
    const Node& parent = nodes_[node];
    const unsigned char* labels = labels_.data() + parent.first_child;
    const unsigned char* found = std::lower_bound(labels, labels + parent.child_count, byte);
    if (found == labels + parent.child_count || *found != byte) return kNoNode;
    return parent.first_child + static_cast<std::uint32_t>(found - labels);
  }

  std::vector<Node> nodes_;
  std::vector<unsigned char> labels_;  // per node: the byte leading to it
};

}  // namespace accel::text

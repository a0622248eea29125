// accel::embed::AddedTokenMatcher — finds the tokenizer's added tokens ([CLS], [SEP], [MASK]...) in raw
// text. `tokenizers` cuts them out of the text before normalizing anything (for added tokens whose
// "normalized" is false, the only kind we accept), so "a[MASK]b" is three tokens, the middle one [MASK]'s id,
// whereas "[mask]" is the five word pieces of '[', 'mask' and ']'.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::embed {

struct AddedToken {
  std::string content;
  std::int32_t id = 0;
};

class AddedTokenMatcher {
 public:
  struct Match {
    std::size_t begin = 0;  // bytes
    std::size_t end = 0;
    std::int32_t id = 0;
  };

  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  // The leftmost match at or after byte `from`, the longest one there (as `tokenizers`' leftmost-longest
  // Aho-Corasick search finds it); nullopt when there is none.
  [[nodiscard]] std::optional<Match> find(std::string_view text, std::size_t from) const;

 private:
  std::vector<AddedToken> tokens_;  // longest first, so the first that matches at a position is the longest
  std::array<bool, 256> starts_{};  // the first bytes of the tokens: most positions are rejected with one load
};

}  // namespace accel::embed

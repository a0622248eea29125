#include "embed/added_token_matcher.hpp"

#include <algorithm>
#include <utility>

namespace accel::embed {

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  std::erase_if(tokens_, [](const AddedToken& token) { return token.content.empty(); });
  std::stable_sort(tokens_.begin(), tokens_.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
  for (const AddedToken& token : tokens_) starts_[static_cast<unsigned char>(token.content.front())] = true;
}

std::optional<AddedTokenMatcher::Match> AddedTokenMatcher::find(std::string_view text, std::size_t from) const {
  if (tokens_.empty()) return std::nullopt;
  for (std::size_t i = from; i < text.size(); ++i) {
    if (!starts_[static_cast<unsigned char>(text[i])]) continue;
    const std::string_view rest = text.substr(i);
    for (const AddedToken& token : tokens_) {
      if (rest.starts_with(token.content)) return Match{.begin = i, .end = i + token.content.size(), .id = token.id};
    }
  }
  return std::nullopt;
}

}  // namespace accel::embed

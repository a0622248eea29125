#include "embed/yes_no_prompt.hpp"

#include <fmt/format.h>

#include <vector>

namespace accel::embed {

Result<TokenBatch> tokenize_yes_no_pairs(const text::Tokenizer& tokenizer, const YesNoReranker& head,
                                         std::string_view query, std::span<const std::string> passages,
                                         Truncation truncation, std::uint32_t max_length, unsigned threads) {
  ACCEL_ASSIGN_OR_RETURN(const text::Encoding prefix, tokenizer.encode(head.prefix, {.add_special_tokens = false}));
  ACCEL_ASSIGN_OR_RETURN(const text::Encoding suffix, tokenizer.encode(head.suffix, {.add_special_tokens = false}));
  const std::size_t around = prefix.ids.size() + suffix.ids.size();
  if (around >= max_length)
    return invalid_argument(
        fmt::format("the yes/no reranker's prompt takes {} tokens around each pair, leaving none "
                    "of the model's {}",
                    around, max_length));
  std::vector<std::string> pairs;
  pairs.reserve(passages.size());
  for (const std::string& passage : passages)
    pairs.push_back(fmt::format("<Instruct>: {}\n<Query>: {}\n<Document>: {}", head.instruction, query, passage));
  ACCEL_ASSIGN_OR_RETURN(const std::vector<text::Encoding> middles,
                         tokenizer.encode_batch(pairs,
                                                {.max_length = max_length - around,
                                                 .side = truncation == Truncation::left ? text::TruncationSide::left
                                                                                        : text::TruncationSide::right},
                                                threads));
  TokenBatch batch;
  batch.ids.reserve(middles.size() * around);
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < middles.size(); ++i) {
    if (truncation == Truncation::refuse && middles[i].truncated)
      return invalid_argument(
          fmt::format("the query and passage {} are longer in the yes/no reranker's prompt than the model's {} tokens",
                      i, max_length));
    ids.assign(prefix.ids.begin(), prefix.ids.end());
    ids.insert(ids.end(), middles[i].ids.begin(), middles[i].ids.end());
    ids.insert(ids.end(), suffix.ids.begin(), suffix.ids.end());
    batch.append(ids);
  }
  return batch;
}

}  // namespace accel::embed

#include "embed/token_batch_check.hpp"

#include <fmt/format.h>

namespace accel::embed {

Status check_token_batch(const TokenBatch& batch, const ModelInfo& info, std::uint32_t token_types) {
  if (batch.offsets.empty() || batch.offsets.front() != 0 || batch.offsets.back() != batch.ids.size())
    return invalid_argument("token batch: offsets must start at 0 and end at the number of ids");
  if (!batch.type_ids.empty() && batch.type_ids.size() != batch.ids.size())
    return invalid_argument(
        fmt::format("token batch: {} type ids for {} ids", batch.type_ids.size(), batch.ids.size()));
  for (std::size_t s = 0; s < batch.sequences(); ++s) {
    if (batch.offsets[s + 1] <= batch.offsets[s]) return invalid_argument(fmt::format("sequence {} is empty", s));
    if (batch.length(s) > info.max_sequence_length)
      return invalid_argument(fmt::format("sequence {} has {} tokens, more than the model's {}", s, batch.length(s),
                                          info.max_sequence_length));
    for (std::uint32_t i = batch.offsets[s]; i < batch.offsets[s + 1]; ++i) {
      if (batch.ids[i] < 0 || static_cast<std::uint32_t>(batch.ids[i]) >= info.vocabulary)
        return invalid_argument(
            fmt::format("sequence {} has token id {}, outside the vocabulary of {}", s, batch.ids[i], info.vocabulary));
      if (!batch.type_ids.empty() &&
          (batch.type_ids[i] < 0 || static_cast<std::uint32_t>(batch.type_ids[i]) >= token_types))
        return invalid_argument(fmt::format("sequence {} has type id {}; the model has {} token type{}", s,
                                            batch.type_ids[i], token_types, token_types == 1 ? "" : "s"));
    }
  }
  return Status();
}

}  // namespace accel::embed

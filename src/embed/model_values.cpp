// The value types of accel/embed/model.hpp: TokenBatch, Embeddings and Output's names.
#include <string_view>
#include <vector>

#include "accel/embed/model.hpp"

namespace accel::embed {

TokenBatch batch_filling(BatchBucket bucket, std::int32_t id) {
  TokenBatch batch;
  for (std::uint32_t s = 0; s < bucket.sequences; ++s) {
    const std::uint32_t length = bucket.tokens / bucket.sequences + (s < bucket.tokens % bucket.sequences ? 1 : 0);
    batch.append(std::vector<std::int32_t>(length, id));
  }
  return batch;
}

void TokenBatch::append(std::span<const std::int32_t> sequence, std::span<const std::int32_t> types) {
  ids.insert(ids.end(), sequence.begin(), sequence.end());
  if (!types.empty()) {
    type_ids.resize(ids.size() - sequence.size(), 0);
    type_ids.insert(type_ids.end(), types.begin(), types.end());
  } else if (!type_ids.empty()) {
    type_ids.resize(ids.size(), 0);
  }
  offsets.push_back(static_cast<std::uint32_t>(ids.size()));
}

std::vector<std::pair<std::uint32_t, float>> Embeddings::nonzeros(std::size_t index) const {
  std::vector<std::pair<std::uint32_t, float>> out;
  const std::span<const float> values = row(index);
  for (std::uint32_t i = 0; i < values.size(); ++i)
    if (values[i] != 0.0f) out.emplace_back(i, values[i]);
  return out;
}

std::string_view to_string(Output output) noexcept {
  switch (output) {
    case Output::dense: return "dense";
    case Output::sparse: return "sparse";
    case Output::scores: return "scores";
  }
  return "unknown";
}

}  // namespace accel::embed

#include "embed/run_split.hpp"

#include <algorithm>

namespace accel::embed {

// The largest rung a call's last tokens run at uncut.
constexpr std::int64_t kUncutRung = 16384;

std::vector<std::size_t> split_runs(std::span<const std::uint32_t> offsets, std::uint32_t most_tokens,
                                    std::size_t most_sequences, std::span<const std::int64_t> rungs) {
  const std::size_t sequences = offsets.empty() ? 0 : offsets.size() - 1;
  std::vector<std::size_t> starts;
  bool cut = false;
  std::size_t first = 0;
  while (first < sequences) {
    starts.push_back(first);
    const auto left = static_cast<std::int64_t>(offsets[sequences] - offsets[first]);
    std::int64_t budget = most_tokens;
    if (left < budget && !cut) {
      const auto above = std::lower_bound(rungs.begin(), rungs.end(), left);  // the rung these tokens would run at
      if (above != rungs.begin() && above != rungs.end() && *above > kUncutRung && (*above - left) * 4 > *above) {
        budget = *(above - 1);
        cut = true;
      }
    }
    std::size_t last = first + 1;  // a run holds at least one sequence
    while (last < sequences && last - first < most_sequences &&
           static_cast<std::int64_t>(offsets[last + 1] - offsets[first]) <= budget)
      ++last;
    first = last;
  }
  starts.push_back(sequences);
  return starts;
}

std::uint32_t token_vector_run_tokens(std::uint32_t hidden, std::uint32_t batch_tokens,
                                      std::uint32_t max_sequence_length) noexcept {
  constexpr std::uint64_t kMostFloats = std::uint64_t{1} << 24;
  std::uint64_t fitting = 1;
  while (fitting * 2 * std::max<std::uint32_t>(hidden, 1) <= kMostFloats) fitting *= 2;
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(batch_tokens, std::max<std::uint64_t>(fitting, max_sequence_length)));
}

}  // namespace accel::embed

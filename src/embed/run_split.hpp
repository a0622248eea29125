// Where a call's packed sequences are cut into runs of the model's graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace accel::embed {

// The first sequence of each run, then the number of sequences: a call's sequences (`offsets`, S + 1 of them,
// ascending from 0) in order, each run holding at most `most_tokens` tokens and `most_sequences` sequences, and at
// least one sequence (none is longer than `most_tokens`).
//
// `rungs` (ascending) are the token extents a replaying device runs a run at: the smallest rung at or above its
// tokens, padded. With none, every run is filled to the budget (the CPU runs a run's actual extent). With them, the
// tokens a call has left after its full runs, when their rung is past 16,384 and they would leave more than a
// quarter of it empty, are cut once more, at the rung below: a call of 40,000 tokens under a 65,536 budget runs as
// about 32,768 + 7,232 (padded to 8,192), not as one run padded to 65,536. Once only, and not at or below 16,384
// tokens, since each run has fixed costs of its own: cutting there too made Qwen3-0.6B's config 1 % slower on an
// H200 (docs/PERFORMANCE.md §63).
[[nodiscard]] std::vector<std::size_t> split_runs(std::span<const std::uint32_t> offsets, std::uint32_t most_tokens,
                                                  std::size_t most_sequences, std::span<const std::int64_t> rungs);

}  // namespace accel::embed

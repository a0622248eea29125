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

// The most tokens one run of the token-vectors graph (a row of `hidden` floats per token) holds within `batch_tokens`:
// the largest power of two whose rows take at most 2^24 floats, the staging buffer's size, yet always the longest
// sequence. A power of two is a rung of the graph's ladder, so a replaying device runs a full run unpadded (2^24 / 384
// floats, all-MiniLM-L6-v2's, would be 43,690 tokens, padded to 65,536).
[[nodiscard]] std::uint32_t token_vector_run_tokens(std::uint32_t hidden, std::uint32_t batch_tokens,
                                                    std::uint32_t max_sequence_length) noexcept;

}  // namespace accel::embed

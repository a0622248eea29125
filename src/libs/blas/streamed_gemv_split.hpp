// How the streamed Gemv (streamed_gemv_kernels.cu, declared in blas_kernels.hpp) splits its sums over blocks: host
// arithmetic in plain C++, so that the CPU test suites check it where no GPU or CUDA compiler is.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace accel::blas {

// The most blocks along a grid's y or z: tiles of a matrix, members of a batch.
constexpr std::int64_t kMaxGridExtent = 65535;

// The streamed kernels' shape: blocks of 8 warps, each lane loading 16 bytes at once (8 16-bit elements, 4 f32).
namespace streamed_shape {
constexpr int kWarps = 8;
constexpr int kLoadBytes = 16;
template <std::size_t kElementBytes>
constexpr int kPerLoad = kLoadBytes / static_cast<int>(kElementBytes);
template <std::size_t kElementBytes>
constexpr int kWarpSpan = 32 * kPerLoad<kElementBytes>;  // rows (plain) or terms (transposed) a warp's loads cover
// A grid of kBlocksEnough blocks (about one an SM of an H100 or H200) is not split: a split's second launch cost more
// than the parallelism it adds (the transposed form at 4,096² 16-bit, 512 blocks: 6.5 µs unsplit, 10.6 in two). A
// smaller one is split into about kBlocksWanted (four an SM): 16-bit 4,096² ran 12.1 µs at 512 blocks and 14.6 at
// 1,024, f32 4,096² 25.8 and 26.6 (PERFORMANCE.md §99).
constexpr std::int64_t kBlocksEnough = 128;
constexpr std::int64_t kBlocksWanted = 512;
// The fewest columns (plain) or terms (transposed, times a warp's span) a split takes: eight loads a lane, in flight
// together.
constexpr std::int64_t kPlainSplitFloor = kWarps * 8;
constexpr std::int64_t kTransposedSplitLoads = 8;
// The most workspace the splits' sums take; a larger batch splits less.
constexpr std::uint64_t kWorkspaceBudget = std::uint64_t{64} << 20;
}  // namespace streamed_shape

// `splits` sums an element of y, each over `span` terms (0 splits: the streamed kernels do not take the product), and
// the workspace of their f32 sums (none for one).
struct StreamedGemvSplit {
  std::int64_t splits = 0;
  std::int64_t span = 0;
  std::uint64_t workspace_bytes = 0;
};

// `terms` sums split into `splits` spans, each a whole number of `quantum` terms (so that every lane's loads stay
// 16-byte aligned), and the workspace of `slots_bytes` of sums a split; rounding the span up may leave fewer splits
// than asked.
[[nodiscard]] inline StreamedGemvSplit split_sums(std::int64_t terms, std::int64_t splits, std::int64_t quantum,
                                                  std::uint64_t slots_bytes) {
  const std::int64_t span = ((terms + splits - 1) / splits + quantum - 1) / quantum * quantum;
  const std::int64_t used = (terms + span - 1) / span;
  return {
      .splits = used, .span = span, .workspace_bytes = used == 1 ? 0 : slots_bytes * static_cast<std::uint64_t>(used)};
}

// A split that gives about kBlocksWanted blocks where the unsplit grid has fewer than kBlocksEnough, each lane eight
// 16-byte loads at least, and at most 64 MiB of workspace, for elements of `element_bytes` (2 or 4); none (0 splits)
// where A's columns are not 16-byte aligned whenever A is (lda, and
// stride_a for a batch, a multiple of a load's elements), the batch exceeds a grid's extent, or (plain) A has fewer
// rows than a warp's loads cover, which would leave most lanes idle.
[[nodiscard]] inline StreamedGemvSplit streamed_gemv_split(std::int64_t element_bytes, std::int64_t m, std::int64_t n,
                                                           bool transpose, std::int64_t batch, std::int64_t lda,
                                                           std::int64_t stride_a) {
  using namespace streamed_shape;
  if (element_bytes != 2 && element_bytes != 4) return {};
  const std::int64_t per_load = kLoadBytes / element_bytes, warp_span = 32 * per_load;
  if (m <= 0 || n <= 0 || batch < 1 || batch > kMaxGridExtent || lda % per_load != 0 ||
      (batch > 1 && stride_a % per_load != 0) || (!transpose && m < warp_span))
    return {};
  // Blocks before splitting: row tiles (plain) or groups of kWarps columns (transposed), for each member.
  const std::int64_t length = transpose ? n : m, terms = transpose ? m : n;
  const std::int64_t unsplit = (transpose ? (n + kWarps - 1) / kWarps : (m + warp_span - 1) / warp_span) * batch;
  const std::int64_t floor = transpose ? warp_span * kTransposedSplitLoads : kPlainSplitFloor;
  const std::int64_t most_by_terms = std::max<std::int64_t>(1, terms / floor);
  const std::uint64_t slots_bytes = static_cast<std::uint64_t>(length) * static_cast<std::uint64_t>(batch) * 4;
  const auto most_by_workspace = static_cast<std::int64_t>(std::max<std::uint64_t>(1, kWorkspaceBudget / slots_bytes));
  const std::int64_t wanted = unsplit >= kBlocksEnough ? 1 : (kBlocksWanted + unsplit - 1) / unsplit;
  const std::int64_t splits =
      std::clamp<std::int64_t>(wanted, 1, std::min({most_by_terms, most_by_workspace, kMaxGridExtent}));
  return split_sums(terms, splits, transpose ? per_load : 1, slots_bytes);
}

}  // namespace accel::blas

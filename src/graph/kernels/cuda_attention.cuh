// The three attention kernels behind cuda::packed_attention: what their launchers take, and who runs what.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "accel/core/dtype.hpp"
#include "graph/kernels/cuda_element.cuh"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::graph::cuda::detail {

struct AttentionArgs {
  const void* q;
  std::int64_t q_stride;
  const void* k;
  std::int64_t k_stride;
  const void* v;
  std::int64_t v_stride;
  const std::int32_t* offsets;
  std::int64_t sequences;
  std::int64_t rows;  // of q, k, v and out: no sequence reaches past them
  std::int32_t max_length;
  int heads;
  int head_dim;
  float scale;
  void* out;
  std::int64_t out_stride;
  int kv_heads;  // dividing heads: query head h reads key/value head h / (heads / kv_heads)
  bool causal;   // query i of a sequence sees its keys 0..i only
  int window;    // > 0: query i sees its keys j with |i - j| <= window only
};

// The kernels that give each sequence a CTA per `rows_per_cta` query rows lay the sequences' CTAs end to end along
// the grid's x rather than giving every sequence as many as the longest could need (a model's whole context: 32,768
// rows for Qwen3-Embedding, of which a passage fills a few hundred). Sequence s's CTAs begin at
// floor(begin_s / rows_per_cta) + s, which leaves it room for its ceil(length_s / rows_per_cta) (the + s pays for a
// partial first one), so that this many CTAs cover every sequence, however long: at most `sequences` of them idle.
inline std::int64_t packed_query_ctas(std::int64_t rows, std::int64_t sequences, int rows_per_cta) {
  return rows / rows_per_cta + sequences;
}

// What CTA `cta` of packed_query_ctas takes: its sequence's span and its first query row there, or a length of 0
// when it has none. Every lane of the calling warp must call it: the warp searches the sequences 32 at a time for
// the last one whose CTAs begin at or before `cta`. Offsets out of order find some sequence, whose span
// sequence_span clamps to the rows as ever.
struct QueryCta {
  std::int64_t begin;
  int length;
  int first_row;
};

__device__ inline std::int64_t first_query_cta(const AttentionArgs& args, int s, int rows_per_cta) {
  return min(max(std::int64_t{args.offsets[s]}, std::int64_t{0}), args.rows) / rows_per_cta + s;
}

// The grid's x is at most 2^31 - 1 CTAs, and as many sequences (packed_query_ctas): ints hold both.
__device__ inline QueryCta query_cta(const AttentionArgs& args, int cta, int rows_per_cta) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  int low = 0, count = static_cast<int>(args.sequences);  // the sequence sought is among low .. low + count - 1
  while (count > 1) {
    const int step = (count + 31) / 32, s = low + lane * step;
    const bool begun = lane * step < count && first_query_cta(args, s, rows_per_cta) <= cta;
    const unsigned begun_lanes = __ballot_sync(0xffffffffu, begun);
    if (begun_lanes == 0) return {0, 0, 0};
    const int last = 31 - __clz(static_cast<int>(begun_lanes));
    low += last * step;
    count = min(step, count - last * step);
  }
  const std::int64_t first = first_query_cta(args, low, rows_per_cta);
  const auto [begin, length] = sequence_span(args.offsets, low, args.rows, args.max_length);
  if (first > cta || (cta - first) * rows_per_cta >= length) return {begin, 0, 0};
  return {begin, length, static_cast<int>((cta - first) * rows_per_cta)};
}

// Whether the tensor-core kernel takes these arguments: f16/bf16, head_dim 32, 64 or 128, 16-byte aligned rows.
bool flash_attention_fits(DType dtype, const AttentionArgs& args);

// The tensor-core kernel (cuda_flash_attention.cu); only for arguments flash_attention_fits accepts.
cudaError_t launch_flash_attention(DType dtype, const AttentionArgs& args, cudaStream_t stream);

// Whether the tensor-core kernel that holds a whole sequence's keys and values in shared memory takes these
// arguments: those flash_attention_fits accepts, no sliding window, and a longest sequence short enough.
bool resident_attention_fits(DType dtype, const AttentionArgs& args);

// That kernel (cuda_resident_attention.cu); only for arguments resident_attention_fits accepts. `rotary` with
// positions: q and k rotated as they are loaded (a parameter of the kernel's rotating form only: the rotation stays out
// of AttentionArgs, which every attention kernel takes, and out of the unrotated kernels' code and shared memory).
cudaError_t launch_resident_attention(DType dtype, const AttentionArgs& args, const AttentionRotary& rotary,
                                      cudaStream_t stream);

}  // namespace accel::graph::cuda::detail

// The vocabulary of the graph operator kernels, shared by the CPU kernels (cpu_kernels.hpp, float) and the CUDA
// kernels (cuda_kernels.hpp, f32/f16/bf16 storage with float arithmetic). Both compute the same functions:
//
// Packed sequences. Token rows of several sequences lie end to end without padding: `offsets` holds
// `sequences + 1` non-decreasing int32 row indices and sequence s is rows [offsets[s], offsets[s+1]). A row in no
// sequence (before offsets[0] or at or after offsets[sequences]) is a padding row; an empty sequence has none.
//
//   gather_rows          out[r] = table[indices[r]], a zero row when the index is outside [0, table_rows).
//   sequence_positions   positions[r] = r - offsets[s] for r in sequence s; 0 for padding rows.
//   unary                y[i] = act(x[i]) (accel::activate's definitions, include/accel/core/epilogue.hpp).
//   bias_activation      y[r][c] = act(x[r][c] + bias[c]); bias may be null (then y = act(x)).
//   binary               out[r][c] = a[r][c] op b[r][c], or op b[c] when b is one row (Broadcast::row).
//   layer_norm           h = x + residual (residual may be null), per row:
//                          y = (h - mean(h)) / sqrt(var(h) + eps) * gamma + beta   (biased variance, as PyTorch)
//                        beta may be null (no shift). When `sum` is given it receives h (pre-norm blocks carry it as
//                        the next residual); the statistics use h before it is rounded to the storage type.
//   rms_norm             h as above; y = h / sqrt(mean(h^2) + eps) * gamma; `sum` as for layer_norm.
//   embedding_layer_norm h[r] = word[ids[r]] + position[r - offsets[s]] + type_row, then layer_norm(h). A word id
//                        or position outside its table adds zeros; type_row may be null. Padding rows are set to 0.
//   packed_attention     per sequence s and head h: O = softmax(scale Q K^T) V over the sequence's own tokens, Q/K/V/O
//                        rows addressed with their own row strides so that Q, K and V may be column slices of one
//                        fused QKV buffer; head h is columns [h d, (h+1) d) of Q and O. K and V have kv_heads heads
//                        (grouped-query attention; kv_heads divides heads): query head h reads key/value head
//                        h / (heads / kv_heads). Causal: query i of a sequence attends to its keys 0..i only;
//                        otherwise to all of them. Window w > 0 (sliding-window attention, ModernBERT's local
//                        layers): only to its keys j with |i - j| <= w as well. Padding rows of `out` are not written.
//   rope                 rotary position embedding of x [rows, heads * d] at positions i32 [rows]: in each head, the
//                        pair of columns (i, i + d/2), i < d/2, is rotated by the angle a = position * f_i, with
//                        f_i = 1 / theta^(2i / d) and a computed in float as transformers computes them:
//                          y_i = x_i cos a - x_{i+d/2} sin a,   y_{i+d/2} = x_{i+d/2} cos a + x_i sin a.
//                        Packed (kv_heads > 0): rows of q|k|v, heads + 2 kv_heads heads; q's and k's rotated, v's
//                        copied. With a head norm gamma [d] (q's; k's when packed), each head is first
//                        x_c / sqrt(mean_c x_c^2 + eps) * gamma_c, rounded to the storage type.
//   gated                y [rows, w] = act(x[:, :w]) * x[:, w:] of x [rows, 2w] (a SwiGLU's or GeGLU's two projections
//                        as one matmul's output). A graph's GateLayout::groups_of_8 is the same function over
//                        [rows * w / 8, 8] (gated_extent).
//   pool                 out[s] = sequence s's rows pooled as PoolMode says (include/accel/graph/pool_mode.hpp): mean,
//                        max, first, last, sum / sqrt(n), or weighted by position + 1; an empty sequence gives a
//                        zero row.
//   l2_normalize         y[r] = x[r] / max(||x[r]||_2, eps)   (torch.nn.functional.normalize).
//   cast                 y[i] = x[i] converted, rounding to nearest even.
//   strided_copy         y (contiguous, row-major over `shape`) = the elements of x at sum_i index_i strides_i.
//
// In-place use: y may alias x (and `sum` may alias x or residual) in the row-wise and element-wise ops, as each
// element is read before the same thread writes it. Attention, gather, pool and strided_copy need distinct
// buffers.
#pragma once

#include <cstdint>

#include "accel/core/epilogue.hpp"
#include "accel/graph/binary_op.hpp"
#include "accel/graph/gate_layout.hpp"
#include "accel/graph/pool_mode.hpp"

namespace accel::graph {

using accel::Activation;

// The shape of the second operand of a binary op.
enum class Broadcast : std::uint8_t {
  none,  // [rows, width], as the first
  row,   // [width], the same for every row (a bias or a scale vector)
};

// A strided view of up to four dimensions, in elements. Dimensions past `rank` are ignored.
struct StridedLayout {
  int rank = 0;
  std::int64_t shape[4] = {};
  std::int64_t strides[4] = {};
};

// The [rows, width] the kernels' gated (halves) computes for a graph's gated op: in groups of 8, each 16 columns of
// x are one row of 8 gates and their 8 ups, and the outputs of consecutive groups lie end to end.
struct GatedExtent {
  std::int64_t rows = 0, width = 0;
};
constexpr GatedExtent gated_extent(GateLayout layout, std::int64_t rows, std::int64_t width) {
  return layout == GateLayout::groups_of_8 ? GatedExtent{rows * (width / 8), 8} : GatedExtent{rows, width};
}

}  // namespace accel::graph

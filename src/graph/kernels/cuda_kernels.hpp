// The graph operator kernels on CUDA: the functions of op_kinds.hpp over f32, f16 or bf16 storage (`dtype`: every
// floating operand of a call has it, gamma/beta/bias included), with float arithmetic. All pointers are device
// memory, offsets/ids/indices included. Each function enqueues its kernels on `stream` and returns
// cudaGetLastError() after the launch: no allocation, no synchronisation. cudaErrorInvalidValue for a dtype outside
// {f32, f16, bf16} or a size the launch cannot cover. Row-wise ops take 16-byte vector paths when the width is a
// multiple of 8 and every row pointer is 16-byte aligned.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "accel/core/dtype.hpp"
#include "graph/kernels/op_kinds.hpp"

namespace accel::graph::cuda {

cudaError_t gather_rows(DType dtype, const void* table, std::int64_t table_rows, std::int64_t width,
                        const std::int32_t* indices, std::int64_t rows, void* out, cudaStream_t stream);

cudaError_t sequence_positions(const std::int32_t* offsets, std::int64_t sequences, std::int64_t rows,
                               std::int32_t* positions, cudaStream_t stream);

cudaError_t unary(DType dtype, Activation activation, const void* x, void* y, std::int64_t count, cudaStream_t stream);

cudaError_t bias_activation(DType dtype, const void* x, const void* bias, std::int64_t rows, std::int64_t width,
                            Activation activation, void* y, cudaStream_t stream);

// C = act(A op(B) + bias), row-major: A [rows, k], B [k, n] or, transposed, [n, k]; bias (may be null) [n].
// The graphs' matmul while cuBLASLt starts (cuda_matmul.cu); rows < 65536 * 64.
cudaError_t matmul(DType dtype, const void* a, const void* b, bool transpose_b, const void* bias, Activation activation,
                   std::int64_t rows, std::int64_t n, std::int64_t k, void* c, cudaStream_t stream);

// A query's few rows: the most rows for which a kernel takes its form that reads the graph's parameters before waiting
// for the kernel before (the few-rows matmul below; norms with constant_weights). A query's bucket holds 16 to 64
// tokens (embed's kSmallestBucket and the rungs above it).
inline constexpr std::int64_t kFewRows = 64;

// C = act(A Wᵀ + bias) + residual for a query's few rows (cuda_few_rows_matmul.cu): A [rows, k], W [n, k], bias [n]
// and residual [rows, n] (either may be null), f16/bf16, rows <= kFewRows, k a multiple of 32 up to 4,096,
// A and W 16-byte aligned: what few_rows_matmul_fits says; anything else is cudaErrorInvalidValue. Launched chained
// (programmatic dependent launch): W and the bias are read before the kernel before it on the stream has finished, so
// no kernel may write them (a graph's parameters).
bool few_rows_matmul_fits(DType dtype, std::int64_t rows, std::int64_t n, std::int64_t k, const void* a, const void* w);
cudaError_t few_rows_matmul(DType dtype, const void* a, const void* w, const void* bias, Activation activation,
                            const void* residual, std::int64_t rows, std::int64_t n, std::int64_t k, void* c,
                            cudaStream_t stream);
// The same product followed by the gated op over it, in one kernel: the product's columns are gates and ups in groups
// of 8 (GateLayout::groups_of_8: gate 8 i + j at column 16 i + j, its up at 16 i + 8 + j), and y [rows, n / 2] takes
// act(gate) * up at column 8 i + j, the gate and up rounded to the storage type first as the product's output would
// be. What few_rows_matmul takes, with n a multiple of 16 and k up to 1,024; y must not alias A.
bool few_rows_gated_matmul_fits(DType dtype, std::int64_t rows, std::int64_t n, std::int64_t k, const void* a,
                                const void* w);
cudaError_t few_rows_gated_matmul(DType dtype, const void* a, const void* w, const void* bias, Activation activation,
                                  std::int64_t rows, std::int64_t n, std::int64_t k, void* y, cudaStream_t stream);

// y [rows, width] = activation(x[:, :width]) * x[:, width:], x [rows, 2 width]; y must not alias x.
cudaError_t gated(DType dtype, const void* x, std::int64_t rows, std::int64_t width, Activation activation, void* y,
                  cudaStream_t stream);

cudaError_t binary(DType dtype, BinaryOp op, const void* a, const void* b, Broadcast b_shape, std::int64_t rows,
                   std::int64_t width, void* out, cudaStream_t stream, Activation a_activation = Activation::identity);

// constant_weights: no kernel writes gamma and beta (a graph's parameters), so up to kFewRows rows read them before
// waiting for the kernel before on the stream.
cudaError_t layer_norm(DType dtype, const void* x, const void* residual, const void* gamma, const void* beta,
                       std::int64_t rows, std::int64_t width, float eps, void* y, void* sum, cudaStream_t stream,
                       bool constant_weights = false);

cudaError_t rms_norm(DType dtype, const void* x, const void* residual, const void* gamma, std::int64_t rows,
                     std::int64_t width, float eps, void* y, void* sum, cudaStream_t stream,
                     bool constant_weights = false);

cudaError_t embedding_layer_norm(DType dtype, const void* word_table, std::int64_t word_rows,
                                 const void* position_table, std::int64_t position_rows, const void* type_row,
                                 const std::int32_t* ids, const std::int32_t* offsets, std::int64_t sequences,
                                 std::int64_t rows, std::int64_t width, const void* gamma, const void* beta, float eps,
                                 void* y, cudaStream_t stream);

// `max_length` must bound every sequence's length (the grid is sized by it; query rows past it are not computed).
// Offsets are kept inside [0, rows) and each sequence to max_length (detail::sequence_span), so wrong offsets give
// wrong numbers, never an access outside the buffers; pool likewise.
// f16/bf16 with head_dim 32, 64 or 128 and 16-byte aligned rows run on tensor cores (mma.sync, flash-attention tiling);
// every other case with head_dim <= 128 runs a generic kernel; larger head dims are cudaErrorInvalidValue.
// kv_heads (0: heads), causal and window as op_kinds.hpp says; kv_heads not dividing heads is cudaErrorInvalidValue.
//
// With `rotary`, q's and k's heads arrive as cuda::rope's input (its packed q|k|v form without head norms, one
// head_dim) and are rotated as rope would, as the kernel loads them: by the kernel that holds a sequence's keys in
// shared memory only. Where that kernel does not take the arguments, cudaErrorNotSupported and nothing is launched:
// the caller runs rope, then attention without `rotary`.
struct AttentionRotary {
  const std::int32_t* positions = nullptr;  // [rows]
  float theta = 0.0f;
};
cudaError_t packed_attention(DType dtype, const void* q, std::int64_t q_stride, const void* k, std::int64_t k_stride,
                             const void* v, std::int64_t v_stride, const std::int32_t* offsets, std::int64_t sequences,
                             std::int64_t rows, std::int32_t max_length, int heads, int head_dim, float scale,
                             void* out, std::int64_t out_stride, cudaStream_t stream, int kv_heads = 0,
                             bool causal = false, int window = 0, const AttentionRotary* rotary = nullptr);

// x and y [rows, heads * head_dim] (y may be x), positions [rows]; head_dim even. kv_heads > 0: rows of q|k|v packed,
// (heads + 2 kv_heads) * head_dim, v's heads copied; query_norm and key_norm [head_dim] (null: none) RMS-normalise q's
// and k's heads first as cpu::RopeHeads says, the normalised value rounded to the storage type before its rotation.
// Those forms take head_dim <= 256, and key_norm exactly when packed with a query_norm.
cudaError_t rope(DType dtype, const void* x, const std::int32_t* positions, std::int64_t rows, int heads, int head_dim,
                 float theta, void* y, cudaStream_t stream, int kv_heads = 0, const void* query_norm = nullptr,
                 const void* key_norm = nullptr, float eps = 0.0f);

cudaError_t pool(PoolMode mode, DType dtype, const void* x, std::int64_t width, const std::int32_t* offsets,
                 std::int64_t sequences, std::int64_t rows, void* out, cudaStream_t stream);

cudaError_t l2_normalize(DType dtype, const void* x, std::int64_t rows, std::int64_t width, float eps, void* y,
                         cudaStream_t stream);

cudaError_t cast(DType from, const void* x, DType to, void* y, std::int64_t count, cudaStream_t stream);

cudaError_t strided_copy(DType dtype, const void* x, const StridedLayout& layout, void* y, cudaStream_t stream);

}  // namespace accel::graph::cuda

// The graph operator kernels on the CPU, in float: the reference the CUDA kernels are tested against and the
// embedded default. Each op's exact semantics is in op_kinds.hpp. Shapes are the caller's to validate; sizes are
// element counts; offsets, ids and indices are host memory. Every kernel large enough to pay for it runs on the
// process's one OpenMP team, which OpenBLAS (its OpenMP build) shares, so GEMMs and the ops between them never
// wait for each other's threads to spin down.
#pragma once

#include <cstdint>

#include "accel/core/dtype.hpp"
#include "graph/kernels/op_kinds.hpp"

namespace accel::graph::cpu {

void gather_rows(const float* table, std::int64_t table_rows, std::int64_t width, const std::int32_t* indices,
                 std::int64_t rows, float* out);

void sequence_positions(const std::int32_t* offsets, std::int64_t sequences, std::int64_t rows,
                        std::int32_t* positions);

void unary(Activation activation, const float* x, float* y, std::int64_t count);

void bias_activation(const float* x, const float* bias, std::int64_t rows, std::int64_t width, Activation activation,
                     float* y);

// y = act(x W + bias): x is rows x k, W is k x n (n x k when transpose_w), bias has n entries or is null.
void matmul_bias_activation(const float* x, const float* w, bool transpose_w, const float* bias, std::int64_t rows,
                            std::int64_t k, std::int64_t n, Activation activation, float* y);

// y [rows, width] = activation(x's first width columns) * its last width, x [rows, 2 width] (gated in op_kinds.hpp).
void gated(const float* x, std::int64_t rows, std::int64_t width, Activation activation, float* y);

// activation(a) op b; out may alias a or b.
void binary(BinaryOp op, const float* a, const float* b, Broadcast b_shape, std::int64_t rows, std::int64_t width,
            float* out, Activation a_activation = Activation::identity);

void layer_norm(const float* x, const float* residual, const float* gamma, const float* beta, std::int64_t rows,
                std::int64_t width, float eps, float* y, float* sum);

void rms_norm(const float* x, const float* residual, const float* gamma, std::int64_t rows, std::int64_t width,
              float eps, float* y, float* sum);

void embedding_layer_norm(const float* word_table, std::int64_t word_rows, const float* position_table,
                          std::int64_t position_rows, const float* type_row, const std::int32_t* ids,
                          const std::int32_t* offsets, std::int64_t sequences, std::int64_t rows, std::int64_t width,
                          const float* gamma, const float* beta, float eps, float* y);

// kv_heads: K and V's heads, dividing heads (query head h reads key/value head h / (heads / kv_heads)); 0 means
// heads. causal: query i of a sequence attends to its keys 0..i only. window > 0: to its keys j with |i - j| <= window
// only (with causal, i - window..i).
void packed_attention(const float* q, std::int64_t q_stride, const float* k, std::int64_t k_stride, const float* v,
                      std::int64_t v_stride, const std::int32_t* offsets, std::int64_t sequences, int heads,
                      int head_dim, float scale, float* out, std::int64_t out_stride, int kv_heads = 0,
                      bool causal = false, int window = 0);

// Rotary position embedding (rope in op_kinds.hpp) of rows of RopeHeads::width() elements; positions has rows
// entries.
struct RopeHeads {
  int heads = 0;     // q's heads (every head's when not packed)
  int kv_heads = 0;  // > 0: rows are q|k|v packed, these k and v heads after q's; v's copied
  int head_dim = 0;
  const float* query_norm = nullptr;  // [head_dim]: q's heads RMS-normalised first (null: not)
  const float* key_norm = nullptr;    // [head_dim]: k's likewise
  float eps = 0.0f;                   // of the norms
  [[nodiscard]] std::int64_t width() const { return (std::int64_t{heads} + 2 * kv_heads) * head_dim; }
};
void rope(const float* x, const std::int32_t* positions, std::int64_t rows, const RopeHeads& shape, float theta,
          float* y);

void pool(PoolMode mode, const float* x, std::int64_t width, const std::int32_t* offsets, std::int64_t sequences,
          float* out);

void l2_normalize(const float* x, std::int64_t rows, std::int64_t width, float eps, float* y);

// Between any two of f32, f16 and bf16 (x and y hold `count` elements of their types); false for other types.
bool cast(DType from, const void* x, DType to, void* y, std::int64_t count);

void strided_copy(const float* x, const StridedLayout& layout, float* y);

}  // namespace accel::graph::cpu

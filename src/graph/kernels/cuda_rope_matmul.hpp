// A packed q|k|v projection fused with its rope (cuda_rope_matmul.cu, sm_90a code): y [rows, (heads + 2 kv_heads)
// head_dim] = x Wᵀ (+ bias), rounded to the storage type, then q's and k's heads of each row normalised by their RMS
// norms where given and rotated as cuda::rope rotates them, v's heads as the product left them: what the product
// followed by cuda::rope computes (over its output, in place), without writing and reading the product between.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "accel/core/dtype.hpp"
#include "graph/kernels/cuda_sm90.hpp"

namespace accel::graph::cuda {

struct RopeMatmulHeads {
  int heads = 0;     // q's
  int kv_heads = 0;  // k's and v's each
  int head_dim = 0;
  float theta = 0;
  const std::int32_t* positions = nullptr;  // one a row
  const void* query_norm = nullptr;         // [head_dim] gammas, or none (then key_norm none too)
  const void* key_norm = nullptr;
  float eps = 0;
};

// f16/bf16, head_dim 64 or 128, k a multiple of 8, x, w, bias and y 16-byte aligned, sizes within int, both norms or
// neither.
bool rope_matmul_fits(DType dtype, std::int64_t rows, std::int64_t k, const RopeMatmulHeads& heads, const void* x,
                      const void* w, const void* bias, const void* y);

// x [rows, k], W [columns, k], bias [columns] or null. cudaErrorInvalidValue where rope_matmul_fits does not hold (or
// the schedule is not one), cudaErrorInvalidDevice on a device other than sm_90.
cudaError_t rope_matmul(DType dtype, const void* x, const void* w, const void* bias, std::int64_t rows, std::int64_t k,
                        const RopeMatmulHeads& heads, void* y, cudaStream_t stream, TileSchedule schedule = {});

}  // namespace accel::graph::cuda

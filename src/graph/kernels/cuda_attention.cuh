// The three attention kernels behind cuda::packed_attention: what their launchers take, and who runs what.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "accel/core/dtype.hpp"

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

// Whether the tensor-core kernel takes these arguments: f16/bf16, head_dim 32, 64 or 128, 16-byte aligned rows.
bool flash_attention_fits(DType dtype, const AttentionArgs& args);

// The tensor-core kernel (cuda_flash_attention.cu); only for arguments flash_attention_fits accepts.
cudaError_t launch_flash_attention(DType dtype, const AttentionArgs& args, cudaStream_t stream);

// Whether the tensor-core kernel that holds a whole sequence's keys and values in shared memory takes these
// arguments: those flash_attention_fits accepts, no sliding window, and a longest sequence short enough.
bool resident_attention_fits(DType dtype, const AttentionArgs& args);

// That kernel (cuda_resident_attention.cu); only for arguments resident_attention_fits accepts.
cudaError_t launch_resident_attention(DType dtype, const AttentionArgs& args, cudaStream_t stream);

}  // namespace accel::graph::cuda::detail

// The CPU reference kernels of operation graphs. Each computes one node, in double, on dense row-major tensors,
// exactly as nodes.hpp states; storage (strides, element types) is the interpreter's concern, not theirs.
//
// Kernels take the dims the graph gives their outputs and check their inputs against them, so a graph that
// slipped past validation gives invalid_argument rather than a read out of bounds.
#pragma once

#include "accel/core/result.hpp"
#include "accel/dnn/nodes.hpp"
#include "dnn/cpu/dense_tensor.hpp"

namespace accel::dnn::cpu {

[[nodiscard]] Result<DenseTensor> convolution(const ConvolutionNode& node, const DenseTensor& a, const DenseTensor& b,
                                              DenseDims out_dims);

// `b` is null for unary modes.
[[nodiscard]] Result<DenseTensor> pointwise(const PointwiseNode& node, const DenseTensor& a, const DenseTensor* b,
                                            DenseDims out_dims);

[[nodiscard]] Result<DenseTensor> matmul(const DenseTensor& a, const DenseTensor& b, DenseDims out_dims);

struct NormalizedTensors {
  DenseTensor y;
  DenseTensor mean;  // batch norm: [1, C, 1...]; layer and RMS norm: [N, 1...]
  DenseTensor inv_variance;
};
struct NormInputs {
  const DenseTensor& x;
  const DenseTensor& scale;
  const DenseTensor* bias = nullptr;          // absent: 0
  const DenseTensor* mean = nullptr;          // batch norm inference only
  const DenseTensor* inv_variance = nullptr;  // batch norm inference only
};
// Training computes the statistics from x and returns them; inference reads `mean` and `inv_variance` and
// returns only y.
[[nodiscard]] Result<NormalizedTensors> batch_norm(const BatchNormNode& node, const NormInputs& in);
// Always computes the statistics (inference too) and returns them; RMS norm's `mean` is left empty.
[[nodiscard]] Result<NormalizedTensors> norm(const NormNode& node, const NormInputs& in);

[[nodiscard]] Result<DenseTensor> reduction(const ReductionNode& node, const DenseTensor& x, DenseDims out_dims);

[[nodiscard]] Result<DenseTensor> pooling(const PoolingNode& node, const DenseTensor& x, DenseDims out_dims);

struct AttentionInputs {
  const DenseTensor& q;
  const DenseTensor& k;
  const DenseTensor& v;
  const DenseTensor* seq_len_q = nullptr;  // both or neither
  const DenseTensor* seq_len_kv = nullptr;
};
struct AttentionResult {
  DenseTensor o;
  DenseTensor stats;  // [B, H, Sq, 1]
};
[[nodiscard]] Result<AttentionResult> attention(const AttentionNode& node, const AttentionInputs& in);

}  // namespace accel::dnn::cpu

/// @file
/// The operations of a graph: one plain struct per kind, naming its tensors by uid (0 = absent) and holding
/// only what changes the result. What each op computes is stated once here; the CPU reference and the cuDNN
/// lowering implement exactly this.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <variant>

namespace accel::dnn {

using SpatialParams = std::array<std::int64_t, 3>;  ///< per spatial dim; the first `spatial_rank` are used

/// Which pass a ConvolutionNode computes, and so which tensors its a, b and out are.
enum class ConvDirection : std::uint8_t {
  forward,          ///< a = x [N, C, spatial], b = w [K, C/groups, filter] -> out = y [N, K, out spatial]
  backward_data,    ///< a = dy, b = w -> out = dx
  backward_filter,  ///< a = x, b = dy -> out = dw
};

/// Cross-correlation, as cuDNN and PyTorch compute it. Groups are implied by the dims: C / w's dim 1.
struct ConvolutionNode {
  ConvDirection direction = ConvDirection::forward;  ///< which pass, and so what a, b and out are
  std::uint8_t spatial_rank = 2;                     ///< spatial dims used, 1 to 3
  std::uint32_t a = 0;                               ///< uid of the first input
  std::uint32_t b = 0;                               ///< uid of the second input
  std::uint32_t out = 0;                             ///< uid of the output
  SpatialParams pre_padding{};                       ///< padding before each spatial dim
  SpatialParams post_padding{};                      ///< padding after each spatial dim
  SpatialParams stride{1, 1, 1};                     ///< step of the window along each spatial dim
  SpatialParams dilation{1, 1, 1};                   ///< spacing of the filter's taps along each spatial dim
  /// Equal when every field is (graphs compare and hash their nodes).
  friend bool operator==(const ConvolutionNode&, const ConvolutionNode&) noexcept = default;
};

/// The element-wise operation of a PointwiseNode: binary modes first (is_binary), then unary ones.
enum class PointwiseMode : std::uint8_t {
  // binary (b broadcasts over dims of size 1)
  add,
  sub,
  mul,
  div,
  min,
  max,
  // unary
  relu,
  sigmoid,
  tanh,
  gelu,
  gelu_approx_tanh,
  swish,
  elu,
  softplus,
  identity,
  sqrt,
  rsqrt,
  exp,
  log,
  neg,
  abs,
};
/// Whether `mode` takes two inputs (add, sub, mul, div, min, max).
[[nodiscard]] bool is_binary(PointwiseMode mode) noexcept;
/// The mode's name, as graphs describe and name their nodes.
[[nodiscard]] std::string_view to_string(PointwiseMode mode) noexcept;

/// out = mode(a) or mode(a, b). `alpha` is swish's beta (x * sigmoid(alpha x)), elu's alpha and softplus's
/// beta (log(1 + exp(alpha x)) / alpha); other modes ignore it.
struct PointwiseNode {
  PointwiseMode mode = PointwiseMode::identity;  ///< the operation
  std::uint32_t a = 0;                           ///< uid of the first input
  std::uint32_t b = 0;                           ///< uid of the second input (0: absent, for a unary mode)
  std::uint32_t out = 0;                         ///< uid of the output
  float alpha = 1.0f;  ///< swish's beta, elu's alpha, softplus's beta; ignored by the other modes
  /// Equal when every field is (graphs compare and hash their nodes).
  friend bool operator==(const PointwiseNode&, const PointwiseNode&) noexcept = default;
};

/// out[..., m, n] = sum_k a[..., m, k] * b[..., k, n]; leading (batch) dims broadcast where one side has 1.
struct MatmulNode {
  std::uint32_t a = 0;    ///< uid of the first input
  std::uint32_t b = 0;    ///< uid of the second input
  std::uint32_t out = 0;  ///< uid of the output
  /// Equal when every field is (graphs compare and hash their nodes).
  friend bool operator==(const MatmulNode&, const MatmulNode&) noexcept = default;
};

/// Per-channel (dim 1) statistics over every other dim. scale, bias, mean and inv_variance are [1, C, 1...].
///   y = (x - mean) * inv_variance * scale + bias
/// Inference reads mean and inv_variance; training computes them from x (inv_variance = 1/sqrt(var + epsilon),
/// var the biased variance) and writes them.
struct BatchNormNode {
  bool training = false;           ///< compute and write the statistics (true) or read them (false)
  std::uint32_t x = 0;             ///< uid of the input
  std::uint32_t scale = 0;         ///< uid of the per-channel scale
  std::uint32_t bias = 0;          ///< uid of the per-channel bias
  std::uint32_t mean = 0;          ///< uid of the per-channel mean, read or written
  std::uint32_t inv_variance = 0;  ///< uid of 1/sqrt(variance + epsilon), read or written
  std::uint32_t y = 0;             ///< uid of the output
  float epsilon = 1e-5f;           ///< added to the variance before the square root
  /// Equal when every field is (graphs compare and hash their nodes).
  friend bool operator==(const BatchNormNode&, const BatchNormNode&) noexcept = default;
};

/// Per-sample statistics over every dim but dim 0. scale and bias have x's dims with dim 0 set to 1.
///   layer norm: y = (x - mean) * inv_variance * scale + bias
///   RMS norm:   y = x * inv_variance * scale (+ bias if given), inv_variance = 1/sqrt(mean(x^2) + epsilon)
/// Training also writes mean (layer norm) and inv_variance, each [N, 1, ...].
enum class NormKind : std::uint8_t { layer, rms };
/// A layer or RMS normalisation of x over every dim but dim 0 (the formulas are NormKind's).
struct NormNode {
  NormKind kind = NormKind::layer;  ///< layer or RMS norm
  bool training = false;            ///< also write mean and inv_variance
  std::uint32_t x = 0;              ///< uid of the input
  std::uint32_t scale = 0;          ///< uid of the scale, x's dims with dim 0 set to 1
  std::uint32_t bias = 0;           ///< uid of the bias, x's dims with dim 0 set to 1 (optional for RMS norm)
  std::uint32_t y = 0;              ///< uid of the output
  std::uint32_t mean = 0;           ///< uid of the per-sample mean, written in training (layer norm only)
  std::uint32_t inv_variance = 0;   ///< uid of the per-sample 1/sqrt(variance + epsilon), written in training
  float epsilon = 1e-5f;            ///< added to the variance (or mean square) before the square root
  /// Equal when every field is (graphs compare and hash their nodes).
  friend bool operator==(const NormNode&, const NormNode&) noexcept = default;
};

/// Reduces every dim where out has extent 1 and x does not. mean = add / count; norm1 = sum |x|;
/// norm2 = sqrt(sum x^2).
enum class ReductionMode : std::uint8_t { add, mul, min, max, mean, norm1, norm2 };
/// The mode's name, as graphs describe and name their nodes.
[[nodiscard]] std::string_view to_string(ReductionMode mode) noexcept;
/// A reduction of x to out's dims (the modes are ReductionMode's).
struct ReductionNode {
  ReductionMode mode = ReductionMode::add;  ///< the operation
  std::uint32_t x = 0;                      ///< uid of the input
  std::uint32_t out = 0;                    ///< uid of the output
  /// Equal when every field is (graphs compare and hash their nodes).
  friend bool operator==(const ReductionNode&, const ReductionNode&) noexcept = default;
};

/// The same elements in row-major order of the logical dims, under new dims.
struct ReshapeNode {
  std::uint32_t x = 0;    ///< uid of the input
  std::uint32_t out = 0;  ///< uid of the output
  /// Equal when every field is (graphs compare and hash their nodes).
  friend bool operator==(const ReshapeNode&, const ReshapeNode&) noexcept = default;
};

/// Pooling over the spatial dims of [N, C, spatial]. Average with `average_include_padding` divides by the
/// window size; `average_exclude_padding` by the number of elements inside the input.
enum class PoolingMode : std::uint8_t { max, average_include_padding, average_exclude_padding };
/// The mode's name, as graphs describe and name their nodes.
[[nodiscard]] std::string_view to_string(PoolingMode mode) noexcept;
/// Pooling of x into out over windows of the spatial dims (the modes are PoolingMode's).
struct PoolingNode {
  PoolingMode mode = PoolingMode::max;  ///< maximum or one of the two averages
  std::uint8_t spatial_rank = 2;        ///< spatial dims used, 1 to 3
  std::uint32_t x = 0;                  ///< uid of the input
  std::uint32_t out = 0;                ///< uid of the output
  SpatialParams window{1, 1, 1};        ///< the window's extent along each spatial dim
  SpatialParams stride{1, 1, 1};        ///< step of the window along each spatial dim
  SpatialParams pre_padding{};          ///< padding before each spatial dim
  SpatialParams post_padding{};         ///< padding after each spatial dim
  /// Equal when every field is (graphs compare and hash their nodes).
  friend bool operator==(const PoolingNode&, const PoolingNode&) noexcept = default;
};

/// Scaled dot-product attention, forward: q [B, H, Sq, D], k [B, H, Skv, D], v [B, H, Skv, Dv] ->
/// o [B, H, Sq, Dv], o = softmax(scale * q k^T + mask) v. `causal` masks key j > query i (top-left aligned).
/// With seq_len_q / seq_len_kv ([B, 1, 1, 1] i32) rows i >= seq_len_q[b] and keys j >= seq_len_kv[b] are
/// padding: masked keys get no weight and padded query rows of o are written as 0. `stats` ([B, H, Sq, 1],
/// f32), when given, receives the log-sum-exp of each row (what the backward pass needs).
struct AttentionNode {
  std::uint32_t q = 0;           ///< uid of the queries, [B, H, Sq, D]
  std::uint32_t k = 0;           ///< uid of the keys, [B, H, Skv, D]
  std::uint32_t v = 0;           ///< uid of the values, [B, H, Skv, Dv]
  std::uint32_t o = 0;           ///< uid of the output, [B, H, Sq, Dv]
  std::uint32_t stats = 0;       ///< uid of the per-row log-sum-exp, [B, H, Sq, 1] f32 (0: not written)
  std::uint32_t seq_len_q = 0;   ///< uid of each batch's valid query rows, [B, 1, 1, 1] i32 (0: all)
  std::uint32_t seq_len_kv = 0;  ///< uid of each batch's valid keys, [B, 1, 1, 1] i32 (0: all)
  bool causal = false;           ///< mask key j > query i
  float scale = 1.0f;            ///< multiplies q k^T before the softmax
  /// Equal when every field is (graphs compare and hash their nodes).
  friend bool operator==(const AttentionNode&, const AttentionNode&) noexcept = default;
};

/// Any one operation of a graph.
using Node = std::variant<ConvolutionNode, PointwiseNode, MatmulNode, BatchNormNode, NormNode, ReductionNode,
                          ReshapeNode, PoolingNode, AttentionNode>;

/// The node's kind as graphs name it: "matmul", "layer_norm", "conv_forward", or a pointwise mode's name.
[[nodiscard]] std::string_view node_name(const Node& node) noexcept;

}  // namespace accel::dnn

/// @file
/// An operation graph: tensors and the ops between them, described on the host, validated once, executed on
/// any device (cuDNN on CUDA, the reference implementation on the CPU) through RunGraph.
///
/// @code
///   accel::dnn::GraphBuilder b;
///   auto x = b.tensor(DType::f16, {32, 64, 56, 56}, TensorLayout::channels_last);
///   auto w = b.tensor(DType::f16, {64, 64, 3, 3}, TensorLayout::channels_last);
///   auto bias = b.tensor(DType::f16, {1, 64, 1, 1});
///   auto y = b.relu(b.add(b.conv_forward(x, w, {.pre_padding = {1, 1}, .post_padding = {1, 1}}), bias));
///   b.output(y, DType::f16, TensorLayout::channels_last);
///   std::shared_ptr<const Graph> graph = *b.build();
///   device.ask(RunGraph{graph, {{x, xs}, {w, ws}, {bias, bs}, {y, ys}}});
/// @endcode
///
/// The builder infers every intermediate's dims (virtual tensors in f32) and reports the first mistake from
/// build(), naming the op. A built Graph carries its signature: a canonical byte encoding of everything
/// that changes the plan, and its 64-bit hash. Plan caches compare the bytes, so equal keys are equal graphs.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/result.hpp"
#include "accel/dnn/nodes.hpp"
#include "accel/dnn/tensor.hpp"

namespace accel::dnn {

/// What plan caches key a graph by: its canonical encoding and a hash of it.
struct GraphSignature {
  std::vector<std::byte> bytes;  ///< the canonical encoding of everything that changes the plan
  std::uint64_t hash = 0;        ///< 64-bit hash of `bytes`
  /// Equal graphs: the hashes, then the bytes, compare equal.
  friend bool operator==(const GraphSignature& a, const GraphSignature& b) noexcept {
    return a.hash == b.hash && a.bytes == b.bytes;
  }
};

/// A validated, immutable operation graph, shared by the requests that run it.
class Graph {
 public:
  /// Every tensor, sorted by uid.
  [[nodiscard]] const std::vector<TensorDesc>& tensors() const noexcept { return tensors_; }
  /// The ops, in a valid execution order.
  [[nodiscard]] const std::vector<Node>& nodes() const noexcept { return nodes_; }
  /// The graph's identity for plan caches.
  [[nodiscard]] const GraphSignature& signature() const noexcept { return signature_; }
  /// The tensor of a uid, or null.
  [[nodiscard]] const TensorDesc* find(std::uint32_t uid) const noexcept;
  /// Tensors a RunGraph must bind: every non-virtual one, in uid order.
  [[nodiscard]] std::vector<std::uint32_t> bound_uids() const;
  /// Whether an op writes the tensor (a graph output) rather than only reading it.
  [[nodiscard]] bool writes(std::uint32_t uid) const noexcept;
  /// A readable description of the tensors and ops, for messages and tests.
  [[nodiscard]] std::string to_string() const;

  /// Validates a description (dims agree between ops, every op's tensors exist, no cycles) and computes its
  /// signature. GraphBuilder::build and the isolated device's decoder both end here.
  static Result<std::shared_ptr<const Graph>> create(std::vector<TensorDesc> tensors, std::vector<Node> nodes);
  /// The inverse of signature().bytes.
  static Result<std::shared_ptr<const Graph>> decode(std::span<const std::byte> bytes);

 private:
  std::vector<TensorDesc> tensors_;     ///< sorted by uid
  std::vector<Node> nodes_;             ///< in a valid execution order
  std::vector<std::uint32_t> written_;  ///< sorted
  GraphSignature signature_;
};

/// A tensor of the graph under construction.
struct TensorRef {
  std::uint32_t uid = 0;  ///< the tensor's uid; 0: none
  /// Whether this names no tensor.
  [[nodiscard]] bool is_null() const noexcept { return uid == 0; }
};

/// Convolution parameters per spatial dim, as many as the input's spatial dims (empty: zeros, or ones).
struct ConvParams {
  std::initializer_list<std::int64_t> pre_padding = {};   ///< padding before each spatial dim; default 0
  std::initializer_list<std::int64_t> post_padding = {};  ///< padding after each spatial dim; default 0
  std::initializer_list<std::int64_t> stride = {};        ///< default 1
  std::initializer_list<std::int64_t> dilation = {};      ///< default 1
};

/// The parameters of GraphBuilder::pooling, per spatial dim (empty: the default).
struct PoolingParams {
  PoolingMode mode = PoolingMode::max;                    ///< maximum or one of the two averages
  std::initializer_list<std::int64_t> window = {};        ///< the window's extent; default 1
  std::initializer_list<std::int64_t> stride = {};        ///< step of the window; default 1
  std::initializer_list<std::int64_t> pre_padding = {};   ///< padding before each spatial dim; default 0
  std::initializer_list<std::int64_t> post_padding = {};  ///< padding after each spatial dim; default 0
};

/// The parameters of GraphBuilder::attention.
struct AttentionParams {
  float scale = 1.0f;       ///< multiplies q k^T before the softmax
  bool causal = false;      ///< mask key j > query i
  TensorRef seq_len_q;      ///< padding mask: both or neither
  TensorRef seq_len_kv;     ///< i32 [B, 1, 1, 1] valid keys per batch
  bool with_stats = false;  ///< also output the per-row log-sum-exp (for a backward pass)
};

/// What a normalisation returns: the output and, when training, the statistics.
struct NormOutputs {
  TensorRef y;             ///< the normalised output
  TensorRef mean;          ///< training only (not for RMS norm)
  TensorRef inv_variance;  ///< training only
};

/// What attention returns: the output and, when asked, the statistics.
struct AttentionOutputs {
  TensorRef o;      ///< the output [B, H, Sq, Dv]
  TensorRef stats;  ///< with_stats only
};

/// Adds ops one by one, inferring each result's dims; build() gives the Graph or the first mistake.
class GraphBuilder {
 public:
  /// An input: packed in `layout`, or with explicit strides.
  TensorRef tensor(DType dtype, std::initializer_list<std::int64_t> dims,
                   TensorLayout layout = TensorLayout::channels_first);
  /// An input with explicit strides.
  TensorRef tensor(DType dtype, std::span<const std::int64_t> dims, std::span<const std::int64_t> strides);

  /// A forward convolution of x by w (ConvDirection::forward).
  TensorRef conv_forward(TensorRef x, TensorRef w, ConvParams params = {});
  /// The data gradient dx (of `dx_dims`) from dy and w.
  TensorRef conv_backward_data(TensorRef dy, TensorRef w, std::initializer_list<std::int64_t> dx_dims,
                               ConvParams params = {});
  /// The filter gradient dw (of `dw_dims`) from x and dy.
  TensorRef conv_backward_filter(TensorRef x, TensorRef dy, std::initializer_list<std::int64_t> dw_dims,
                                 ConvParams params = {});

  /// `mode` of a (and b, for a binary mode); `alpha` as PointwiseNode's.
  TensorRef pointwise(PointwiseMode mode, TensorRef a, TensorRef b = {}, float alpha = 1.0f);
  /// a + b, b broadcasting over dims of size 1.
  TensorRef add(TensorRef a, TensorRef b) { return pointwise(PointwiseMode::add, a, b); }
  /// a * b, b broadcasting over dims of size 1.
  TensorRef mul(TensorRef a, TensorRef b) { return pointwise(PointwiseMode::mul, a, b); }
  /// max(a, 0).
  TensorRef relu(TensorRef a) { return pointwise(PointwiseMode::relu, a); }

  /// a b over the last two dims, batch dims broadcasting.
  TensorRef matmul(TensorRef a, TensorRef b);
  /// Batch normalisation with given statistics.
  TensorRef batch_norm_inference(TensorRef x, TensorRef mean, TensorRef inv_variance, TensorRef scale, TensorRef bias);
  /// Batch normalisation that computes the statistics from x and outputs them.
  NormOutputs batch_norm_training(TensorRef x, TensorRef scale, TensorRef bias, float epsilon);
  /// Layer normalisation over every dim but dim 0; the statistics are outputs when training.
  NormOutputs layer_norm(TensorRef x, TensorRef scale, TensorRef bias, float epsilon, bool training = false);
  /// RMS normalisation over every dim but dim 0, with an optional bias; inv_variance is an output when training.
  NormOutputs rms_norm(TensorRef x, TensorRef scale, float epsilon, bool training = false, TensorRef bias = {});
  /// x reduced to `out_dims` by `mode` (dims of extent 1 in out are reduced).
  TensorRef reduction(ReductionMode mode, TensorRef x, std::initializer_list<std::int64_t> out_dims);
  /// The same elements under new dims.
  TensorRef reshape(TensorRef x, std::initializer_list<std::int64_t> dims);
  /// Pooling over the spatial dims of x.
  TensorRef pooling(TensorRef x, PoolingParams params);
  /// Scaled dot-product attention of q, k and v (AttentionNode).
  AttentionOutputs attention(TensorRef q, TensorRef k, TensorRef v, AttentionParams params);

  /// Makes an op's result a graph output, stored in `dtype` (packed in `layout`).
  void output(TensorRef t, DType dtype, TensorLayout layout = TensorLayout::channels_first);

  /// The graph, or the first mistake met while building it (naming the op).
  [[nodiscard]] Result<std::shared_ptr<const Graph>> build();

 private:
  TensorRef add_tensor(TensorDesc desc);
  TensorRef add_virtual(std::span<const std::int64_t> dims, TensorLayout layout);
  /// The uid the (offset+1)-th tensor created from now on will get: results are named before they exist.
  [[nodiscard]] std::uint32_t upcoming_uid(std::uint32_t offset = 0) const noexcept;
  /// Checks the node, creates its not-yet-existing results as virtual tensors (in `layout`) and appends it.
  /// False (and the builder failed) when the node is wrong.
  bool append(const Node& node, TensorLayout layout);
  TensorRef convolution(ConvDirection direction, TensorRef a, TensorRef b, std::span<const std::int64_t> given_dims,
                        const ConvParams& params);
  const TensorDesc* find(TensorRef ref) const;
  const TensorDesc* require(TensorRef ref, std::string_view op, std::string_view role);
  void fail(Status status);

  std::vector<TensorDesc> tensors_;
  std::vector<Node> nodes_;
  Status error_;
};

/// A RunGraph's buffer for one tensor of the graph.
struct TensorBinding {
  std::uint32_t uid = 0;  ///< the tensor's uid
  BufferHandle buffer;    ///< a buffer of the tensor's dtype holding its storage extent
};

}  // namespace accel::dnn

namespace accel {

/// Runs a built graph on the device. Every non-virtual tensor is bound to a buffer of its dtype that holds
/// its storage extent; inputs are read, outputs written.
struct RunGraph {
  static constexpr const char* kName = "RunGraph";
  using Response = Done;

  std::shared_ptr<const dnn::Graph> graph;   ///< the built graph
  std::vector<dnn::TensorBinding> bindings;  ///< a buffer for every non-virtual tensor
};

}  // namespace accel

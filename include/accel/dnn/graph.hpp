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

struct GraphSignature {
  std::vector<std::byte> bytes;
  std::uint64_t hash = 0;
  friend bool operator==(const GraphSignature& a, const GraphSignature& b) noexcept {
    return a.hash == b.hash && a.bytes == b.bytes;
  }
};

class Graph {
 public:
  [[nodiscard]] const std::vector<TensorDesc>& tensors() const noexcept { return tensors_; }
  [[nodiscard]] const std::vector<Node>& nodes() const noexcept { return nodes_; }
  [[nodiscard]] const GraphSignature& signature() const noexcept { return signature_; }
  /// The tensor of a uid, or null.
  [[nodiscard]] const TensorDesc* find(std::uint32_t uid) const noexcept;
  /// Tensors a RunGraph must bind: every non-virtual one, in uid order.
  [[nodiscard]] std::vector<std::uint32_t> bound_uids() const;
  /// Whether an op writes the tensor (a graph output) rather than only reading it.
  [[nodiscard]] bool writes(std::uint32_t uid) const noexcept;
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
  std::uint32_t uid = 0;
  [[nodiscard]] bool is_null() const noexcept { return uid == 0; }
};

struct ConvParams {
  std::initializer_list<std::int64_t> pre_padding = {};
  std::initializer_list<std::int64_t> post_padding = {};
  std::initializer_list<std::int64_t> stride = {};    ///< default 1
  std::initializer_list<std::int64_t> dilation = {};  ///< default 1
};

struct PoolingParams {
  PoolingMode mode = PoolingMode::max;
  std::initializer_list<std::int64_t> window = {};
  std::initializer_list<std::int64_t> stride = {};
  std::initializer_list<std::int64_t> pre_padding = {};
  std::initializer_list<std::int64_t> post_padding = {};
};

struct AttentionParams {
  float scale = 1.0f;
  bool causal = false;
  TensorRef seq_len_q;  ///< padding mask: both or neither
  TensorRef seq_len_kv;
  bool with_stats = false;
};

struct NormOutputs {
  TensorRef y;
  TensorRef mean;          ///< training only (not for RMS norm)
  TensorRef inv_variance;  ///< training only
};

struct AttentionOutputs {
  TensorRef o;
  TensorRef stats;  ///< with_stats only
};

class GraphBuilder {
 public:
  /// An input: packed in `layout`, or with explicit strides.
  TensorRef tensor(DType dtype, std::initializer_list<std::int64_t> dims,
                   TensorLayout layout = TensorLayout::channels_first);
  TensorRef tensor(DType dtype, std::span<const std::int64_t> dims, std::span<const std::int64_t> strides);

  TensorRef conv_forward(TensorRef x, TensorRef w, ConvParams params = {});
  TensorRef conv_backward_data(TensorRef dy, TensorRef w, std::initializer_list<std::int64_t> dx_dims,
                               ConvParams params = {});
  TensorRef conv_backward_filter(TensorRef x, TensorRef dy, std::initializer_list<std::int64_t> dw_dims,
                                 ConvParams params = {});

  TensorRef pointwise(PointwiseMode mode, TensorRef a, TensorRef b = {}, float alpha = 1.0f);
  TensorRef add(TensorRef a, TensorRef b) { return pointwise(PointwiseMode::add, a, b); }
  TensorRef mul(TensorRef a, TensorRef b) { return pointwise(PointwiseMode::mul, a, b); }
  TensorRef relu(TensorRef a) { return pointwise(PointwiseMode::relu, a); }

  TensorRef matmul(TensorRef a, TensorRef b);
  TensorRef batch_norm_inference(TensorRef x, TensorRef mean, TensorRef inv_variance, TensorRef scale, TensorRef bias);
  NormOutputs batch_norm_training(TensorRef x, TensorRef scale, TensorRef bias, float epsilon);
  NormOutputs layer_norm(TensorRef x, TensorRef scale, TensorRef bias, float epsilon, bool training = false);
  NormOutputs rms_norm(TensorRef x, TensorRef scale, float epsilon, bool training = false, TensorRef bias = {});
  TensorRef reduction(ReductionMode mode, TensorRef x, std::initializer_list<std::int64_t> out_dims);
  TensorRef reshape(TensorRef x, std::initializer_list<std::int64_t> dims);
  TensorRef pooling(TensorRef x, PoolingParams params);
  AttentionOutputs attention(TensorRef q, TensorRef k, TensorRef v, AttentionParams params);

  /// Makes an op's result a graph output, stored in `dtype` (packed in `layout`).
  void output(TensorRef t, DType dtype, TensorLayout layout = TensorLayout::channels_first);

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

struct TensorBinding {
  std::uint32_t uid = 0;
  BufferHandle buffer;
};

}  // namespace accel::dnn

namespace accel {

/// Runs a built graph on the device. Every non-virtual tensor is bound to a buffer of its dtype that holds
/// its storage extent; inputs are read, outputs written.
struct RunGraph {
  static constexpr const char* kName = "RunGraph";
  using Response = Done;

  std::shared_ptr<const dnn::Graph> graph;
  std::vector<dnn::TensorBinding> bindings;
};

}  // namespace accel

// GraphBuilder: a graph described one op at a time (accel/dnn/graph.hpp), checked as it grows.
#include "accel/dnn/graph.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "dnn/node_rules.hpp"

namespace accel::dnn {
namespace {

// The layout a packed tensor was given, so an op's virtual result keeps its input's layout.
TensorLayout layout_of(const TensorDesc& t) {
  const Dims last = packed_strides(t.shape(), TensorLayout::channels_last);
  const Dims first = packed_strides(t.shape(), TensorLayout::channels_first);
  return t.strides == last && t.strides != first ? TensorLayout::channels_last : TensorLayout::channels_first;
}

Dims to_dims(std::span<const std::int64_t> values) {
  Dims dims{};
  std::copy(values.begin(), values.end(), dims.begin());
  return dims;
}

}  // namespace

void GraphBuilder::fail(Status status) {
  if (error_.ok()) error_ = std::move(status);
}

const TensorDesc* GraphBuilder::find(TensorRef ref) const {
  for (const TensorDesc& t : tensors_)
    if (t.uid == ref.uid) return &t;
  return nullptr;
}

TensorRef GraphBuilder::add_tensor(TensorDesc desc) {
  desc.uid = static_cast<std::uint32_t>(tensors_.size() + 1);
  if (Status valid = validate(desc, "tensor"); !valid.ok()) {
    fail(std::move(valid));
    return {};
  }
  tensors_.push_back(desc);
  return {desc.uid};
}

TensorRef GraphBuilder::add_virtual(std::span<const std::int64_t> dims, TensorLayout layout) {
  if (dims.size() > kMaxDims) {
    fail(invalid_argument(fmt::format("a result of rank {} exceeds {}", dims.size(), kMaxDims)));
    return {};
  }
  return add_tensor({.dtype = DType::f32,
                     .rank = static_cast<std::uint8_t>(dims.size()),
                     .is_virtual = true,
                     .dims = to_dims(dims),
                     .strides = packed_strides(dims, layout)});
}

TensorRef GraphBuilder::tensor(DType dtype, std::initializer_list<std::int64_t> dims, TensorLayout layout) {
  const std::span<const std::int64_t> d(dims.begin(), dims.size());
  if (d.size() > kMaxDims) {
    fail(invalid_argument(fmt::format("a tensor of rank {} exceeds {}", d.size(), kMaxDims)));
    return {};
  }
  return add_tensor({.dtype = dtype,
                     .rank = static_cast<std::uint8_t>(d.size()),
                     .dims = to_dims(d),
                     .strides = packed_strides(d, layout)});
}

TensorRef GraphBuilder::tensor(DType dtype, std::span<const std::int64_t> dims, std::span<const std::int64_t> strides) {
  if (dims.size() > kMaxDims || dims.size() != strides.size()) {
    fail(invalid_argument(fmt::format("a tensor needs one stride per dim (at most {} dims), got {} dims and {} strides",
                                      kMaxDims, dims.size(), strides.size())));
    return {};
  }
  return add_tensor({.dtype = dtype,
                     .rank = static_cast<std::uint8_t>(dims.size()),
                     .dims = to_dims(dims),
                     .strides = to_dims(strides)});
}

namespace {

// Fills the first entries of a per-spatial-dim parameter; the rest keep their default.
SpatialParams spatial(std::initializer_list<std::int64_t> values, std::int64_t fallback) {
  SpatialParams out{fallback, fallback, fallback};
  std::size_t i = 0;
  for (std::int64_t v : values) {
    if (i < out.size()) out[i] = v;
    ++i;
  }
  return out;
}

}  // namespace

std::uint32_t GraphBuilder::upcoming_uid(std::uint32_t offset) const noexcept {
  return static_cast<std::uint32_t>(tensors_.size()) + 1 + offset;
}

const TensorDesc* GraphBuilder::require(TensorRef ref, std::string_view op, std::string_view role) {
  const TensorDesc* t = find(ref);
  if (t == nullptr) fail(invalid_argument(fmt::format("{}: {} is not a tensor of this builder", op, role)));
  return t;
}

bool GraphBuilder::append(const Node& node, TensorLayout layout) {
  if (!error_.ok()) return false;
  const TensorLookup lookup = [this](std::uint32_t uid) { return find({uid}); };
  Result<std::vector<OutputShape>> shapes = infer_outputs(node, lookup);
  if (!shapes.ok()) {
    fail(shapes.status());
    return false;
  }
  for (const OutputShape& shape : *shapes) {
    if (find({shape.uid}) != nullptr) continue;
    if (shape.uid != upcoming_uid() || add_virtual(shape.dims, layout).is_null()) {
      fail(internal_error(fmt::format("{}: results named out of order", node_name(node))));
      return false;
    }
  }
  nodes_.push_back(node);
  return true;
}

// The three directions share everything but their operands' roles and who states the result's dims: the
// forward result is inferred, the backward ones are given (their dims are not determined by the inputs).
TensorRef GraphBuilder::convolution(ConvDirection direction, TensorRef a, TensorRef b,
                                    std::span<const std::int64_t> given_dims, const ConvParams& params) {
  ConvolutionNode node{.direction = direction,
                       .a = a.uid,
                       .b = b.uid,
                       .pre_padding = spatial(params.pre_padding, 0),
                       .post_padding = spatial(params.post_padding, 0),
                       .stride = spatial(params.stride, 1),
                       .dilation = spatial(params.dilation, 1)};
  const std::string_view op = node_name(node);
  const std::string_view a_role = direction == ConvDirection::backward_data ? "dy" : "x";
  const std::string_view b_role = direction == ConvDirection::backward_filter ? "dy" : "w";
  const TensorDesc* ad = require(a, op, a_role);
  if (ad == nullptr || require(b, op, b_role) == nullptr) return {};
  node.spatial_rank = static_cast<std::uint8_t>(ad->rank >= 2 ? ad->rank - 2 : 0);
  const TensorLayout layout = layout_of(*ad);
  if (direction == ConvDirection::forward) {
    node.out = upcoming_uid();
  } else {
    node.out = add_virtual(given_dims, layout).uid;
    if (node.out == 0) return {};
  }
  return append(node, layout) ? TensorRef{node.out} : TensorRef{};
}

TensorRef GraphBuilder::conv_forward(TensorRef x, TensorRef w, ConvParams params) {
  return convolution(ConvDirection::forward, x, w, {}, params);
}

TensorRef GraphBuilder::conv_backward_data(TensorRef dy, TensorRef w, std::initializer_list<std::int64_t> dx_dims,
                                           ConvParams params) {
  return convolution(ConvDirection::backward_data, dy, w, {dx_dims.begin(), dx_dims.size()}, params);
}

TensorRef GraphBuilder::conv_backward_filter(TensorRef x, TensorRef dy, std::initializer_list<std::int64_t> dw_dims,
                                             ConvParams params) {
  return convolution(ConvDirection::backward_filter, x, dy, {dw_dims.begin(), dw_dims.size()}, params);
}

TensorRef GraphBuilder::pointwise(PointwiseMode mode, TensorRef a, TensorRef b, float alpha) {
  const TensorDesc* ad = require(a, to_string(mode), "a");
  if (ad == nullptr || (!b.is_null() && require(b, to_string(mode), "b") == nullptr)) return {};
  const PointwiseNode node{.mode = mode, .a = a.uid, .b = b.uid, .out = upcoming_uid(), .alpha = alpha};
  return append(node, layout_of(*ad)) ? TensorRef{node.out} : TensorRef{};
}

TensorRef GraphBuilder::matmul(TensorRef a, TensorRef b) {
  if (require(a, "matmul", "a") == nullptr || require(b, "matmul", "b") == nullptr) return {};
  const MatmulNode node{.a = a.uid, .b = b.uid, .out = upcoming_uid()};
  return append(node, TensorLayout::channels_first) ? TensorRef{node.out} : TensorRef{};
}

TensorRef GraphBuilder::batch_norm_inference(TensorRef x, TensorRef mean, TensorRef inv_variance, TensorRef scale,
                                             TensorRef bias) {
  const TensorDesc* xd = require(x, "batch_norm_inference", "x");
  if (xd == nullptr) return {};
  const BatchNormNode node{.training = false,
                           .x = x.uid,
                           .scale = scale.uid,
                           .bias = bias.uid,
                           .mean = mean.uid,
                           .inv_variance = inv_variance.uid,
                           .y = upcoming_uid()};
  return append(node, layout_of(*xd)) ? TensorRef{node.y} : TensorRef{};
}

NormOutputs GraphBuilder::batch_norm_training(TensorRef x, TensorRef scale, TensorRef bias, float epsilon) {
  const TensorDesc* xd = require(x, "batch_norm_training", "x");
  if (xd == nullptr) return {};
  const BatchNormNode node{.training = true,
                           .x = x.uid,
                           .scale = scale.uid,
                           .bias = bias.uid,
                           .mean = upcoming_uid(1),
                           .inv_variance = upcoming_uid(2),
                           .y = upcoming_uid(),
                           .epsilon = epsilon};
  if (!append(node, layout_of(*xd))) return {};
  return {{node.y}, {node.mean}, {node.inv_variance}};
}

NormOutputs GraphBuilder::layer_norm(TensorRef x, TensorRef scale, TensorRef bias, float epsilon, bool training) {
  const TensorDesc* xd = require(x, "layer_norm", "x");
  if (xd == nullptr) return {};
  const NormNode node{.kind = NormKind::layer,
                      .training = training,
                      .x = x.uid,
                      .scale = scale.uid,
                      .bias = bias.uid,
                      .y = upcoming_uid(),
                      .mean = training ? upcoming_uid(1) : 0,
                      .inv_variance = training ? upcoming_uid(2) : 0,
                      .epsilon = epsilon};
  if (!append(node, layout_of(*xd))) return {};
  return {{node.y}, {node.mean}, {node.inv_variance}};
}

NormOutputs GraphBuilder::rms_norm(TensorRef x, TensorRef scale, float epsilon, bool training, TensorRef bias) {
  const TensorDesc* xd = require(x, "rms_norm", "x");
  if (xd == nullptr) return {};
  const NormNode node{.kind = NormKind::rms,
                      .training = training,
                      .x = x.uid,
                      .scale = scale.uid,
                      .bias = bias.uid,
                      .y = upcoming_uid(),
                      .inv_variance = training ? upcoming_uid(1) : 0,
                      .epsilon = epsilon};
  if (!append(node, layout_of(*xd))) return {};
  return {{node.y}, {}, {node.inv_variance}};
}

TensorRef GraphBuilder::reduction(ReductionMode mode, TensorRef x, std::initializer_list<std::int64_t> out_dims) {
  const TensorDesc* xd = require(x, "reduction", "x");
  if (xd == nullptr) return {};
  const TensorLayout layout = layout_of(*xd);
  const TensorRef out = add_virtual({out_dims.begin(), out_dims.size()}, layout);
  if (out.is_null()) return {};
  return append(ReductionNode{.mode = mode, .x = x.uid, .out = out.uid}, layout) ? out : TensorRef{};
}

TensorRef GraphBuilder::reshape(TensorRef x, std::initializer_list<std::int64_t> dims) {
  if (require(x, "reshape", "x") == nullptr) return {};
  const TensorRef out = add_virtual({dims.begin(), dims.size()}, TensorLayout::channels_first);
  if (out.is_null()) return {};
  return append(ReshapeNode{.x = x.uid, .out = out.uid}, TensorLayout::channels_first) ? out : TensorRef{};
}

TensorRef GraphBuilder::pooling(TensorRef x, PoolingParams params) {
  const TensorDesc* xd = require(x, "pooling", "x");
  if (xd == nullptr) return {};
  const PoolingNode node{.mode = params.mode,
                         .spatial_rank = static_cast<std::uint8_t>(xd->rank >= 2 ? xd->rank - 2 : 0),
                         .x = x.uid,
                         .out = upcoming_uid(),
                         .window = spatial(params.window, 1),
                         .stride = spatial(params.stride, 1),
                         .pre_padding = spatial(params.pre_padding, 0),
                         .post_padding = spatial(params.post_padding, 0)};
  return append(node, layout_of(*xd)) ? TensorRef{node.out} : TensorRef{};
}

AttentionOutputs GraphBuilder::attention(TensorRef q, TensorRef k, TensorRef v, AttentionParams params) {
  const TensorDesc* qd = require(q, "attention", "q");
  if (qd == nullptr) return {};
  const AttentionNode node{.q = q.uid,
                           .k = k.uid,
                           .v = v.uid,
                           .o = upcoming_uid(),
                           .stats = params.with_stats ? upcoming_uid(1) : 0,
                           .seq_len_q = params.seq_len_q.uid,
                           .seq_len_kv = params.seq_len_kv.uid,
                           .causal = params.causal,
                           .scale = params.scale};
  if (!append(node, TensorLayout::channels_first)) return {};
  return {{node.o}, {node.stats}};
}

void GraphBuilder::output(TensorRef t, DType dtype, TensorLayout layout) {
  for (TensorDesc& desc : tensors_) {
    if (desc.uid != t.uid) continue;
    if (!desc.is_virtual) {
      fail(invalid_argument(fmt::format("output: %{} is an input of the graph, not an op's result", t.uid)));
      return;
    }
    desc.is_virtual = false;
    desc.dtype = dtype;
    desc.strides = packed_strides(desc.shape(), layout);
    return;
  }
  fail(invalid_argument(fmt::format("output: uid {} is not a tensor of this builder", t.uid)));
}

Result<std::shared_ptr<const Graph>> GraphBuilder::build() {
  if (!error_.ok()) return error_;
  return Graph::create(tensors_, nodes_);
}

}  // namespace accel::dnn

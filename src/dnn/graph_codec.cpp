#include "dnn/graph_codec.hpp"

#include <type_traits>

namespace accel::dnn {
namespace {

// Each node's fields, listed once for both directions.
template <class N, class F>
void fields(N& n, F&& f) {
  using T = std::remove_const_t<N>;
  if constexpr (std::is_same_v<T, ConvolutionNode>) {
    f(n.direction, n.spatial_rank, n.a, n.b, n.out, n.pre_padding, n.post_padding, n.stride, n.dilation);
  } else if constexpr (std::is_same_v<T, PointwiseNode>) {
    f(n.mode, n.a, n.b, n.out, n.alpha);
  } else if constexpr (std::is_same_v<T, MatmulNode>) {
    f(n.a, n.b, n.out);
  } else if constexpr (std::is_same_v<T, BatchNormNode>) {
    f(n.training, n.x, n.scale, n.bias, n.mean, n.inv_variance, n.y, n.epsilon);
  } else if constexpr (std::is_same_v<T, NormNode>) {
    f(n.kind, n.training, n.x, n.scale, n.bias, n.y, n.mean, n.inv_variance, n.epsilon);
  } else if constexpr (std::is_same_v<T, ReductionNode>) {
    f(n.mode, n.x, n.out);
  } else if constexpr (std::is_same_v<T, ReshapeNode>) {
    f(n.x, n.out);
  } else if constexpr (std::is_same_v<T, PoolingNode>) {
    f(n.mode, n.spatial_rank, n.x, n.out, n.window, n.stride, n.pre_padding, n.post_padding);
  } else {
    static_assert(std::is_same_v<T, AttentionNode>);
    f(n.q, n.k, n.v, n.o, n.stats, n.seq_len_q, n.seq_len_kv, n.causal, n.scale);
  }
}

template <std::size_t I = 0>
bool emplace_node(std::uint8_t index, Node& node) {
  if constexpr (I == std::variant_size_v<Node>) {
    return false;
  } else {
    if (index == I) {
      node.emplace<I>();
      return true;
    }
    return emplace_node<I + 1>(index, node);
  }
}

}  // namespace

std::vector<std::byte> encode_graph(std::span<const TensorDesc> tensors, std::span<const Node> nodes) {
  ByteWriter out;
  auto write = [&](const auto&... values) { out.fields(values...); };
  write(kGraphEncodingFormat, static_cast<std::uint32_t>(tensors.size()), static_cast<std::uint32_t>(nodes.size()));
  for (const TensorDesc& t : tensors) {
    write(t.uid, t.dtype, t.rank, t.is_virtual, t.alignment);
    for (std::size_t i = 0; i < t.rank; ++i) write(t.dims[i], t.strides[i]);
  }
  for (const Node& node : nodes) {
    write(static_cast<std::uint8_t>(node.index()));
    std::visit([&](const auto& n) { fields(n, write); }, node);
  }
  return out.take();
}

Result<DecodedGraph> decode_graph(std::span<const std::byte> bytes) {
  ByteReader in(bytes);
  auto read = [&](auto&... values) { in.fields(values...); };
  std::byte format{};
  std::uint32_t tensor_count = 0;
  std::uint32_t node_count = 0;
  read(format, tensor_count, node_count);
  if (!in.ok() || format != kGraphEncodingFormat) {
    return invalid_argument("not a graph encoding (or one of another format version)");
  }
  constexpr std::uint32_t kLimit = 1u << 16;
  if (tensor_count > kLimit || node_count > kLimit) return invalid_argument("graph encoding: implausible counts");
  DecodedGraph graph;
  graph.tensors.resize(tensor_count);
  for (TensorDesc& t : graph.tensors) {
    read(t.uid, t.dtype, t.rank, t.is_virtual, t.alignment);
    if (!in.ok() || t.rank > kMaxDims) return invalid_argument("graph encoding: a tensor is cut short");
    for (std::size_t i = 0; i < t.rank; ++i) read(t.dims[i], t.strides[i]);
  }
  graph.nodes.resize(node_count);
  for (Node& node : graph.nodes) {
    std::uint8_t index = 0;
    read(index);
    if (!in.ok() || !emplace_node(index, node)) return invalid_argument("graph encoding: unknown op");
    std::visit([&](auto& n) { fields(n, read); }, node);
  }
  if (!in.ok() || !in.finished()) return invalid_argument("graph encoding: cut short or trailing bytes");
  return graph;
}

}  // namespace accel::dnn

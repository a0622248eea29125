#include "accel/dnn/graph.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "dnn/graph_codec.hpp"
#include "dnn/node_rules.hpp"

namespace accel::dnn {
namespace {

// The dtypes cuDNN's graphs and the CPU reference both know (no unsigned wider than a byte, no complex).
bool known_dtype(DType dtype) {
  return static_cast<std::uint8_t>(dtype) <= static_cast<std::uint8_t>(DType::u8) || dtype == DType::i64;
}

}  // namespace

const TensorDesc* Graph::find(std::uint32_t uid) const noexcept {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), uid,
                             [](const TensorDesc& t, std::uint32_t u) { return t.uid < u; });
  return it != tensors_.end() && it->uid == uid ? &*it : nullptr;
}

std::vector<std::uint32_t> Graph::bound_uids() const {
  std::vector<std::uint32_t> uids;
  for (const TensorDesc& t : tensors_)
    if (!t.is_virtual) uids.push_back(t.uid);
  return uids;
}

bool Graph::writes(std::uint32_t uid) const noexcept {
  return std::binary_search(written_.begin(), written_.end(), uid);
}

std::string Graph::to_string() const {
  std::string text;
  for (const TensorDesc& t : tensors_) text += fmt::format("  {}\n", dnn::to_string(t));
  for (const Node& node : nodes_) {
    const NodeTensors io = tensors_of(node);
    text +=
        fmt::format("  {}(%{}) -> %{}\n", node_name(node), fmt::join(io.inputs, ", %"), fmt::join(io.outputs, ", %"));
  }
  return text;
}

Result<std::shared_ptr<const Graph>> Graph::create(std::vector<TensorDesc> tensors, std::vector<Node> nodes) {
  if (nodes.empty()) return invalid_argument("a graph needs at least one op");
  std::sort(tensors.begin(), tensors.end(), [](const TensorDesc& a, const TensorDesc& b) { return a.uid < b.uid; });
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    ACCEL_RETURN_IF_ERROR(validate(tensors[i], "tensor"));
    if (!known_dtype(tensors[i].dtype)) {
      const DType dtype = tensors[i].dtype;
      if (!is_dtype(static_cast<std::uint8_t>(dtype)))
        return invalid_argument(fmt::format("tensor %{}: unknown dtype {}", tensors[i].uid, static_cast<int>(dtype)));
      return invalid_argument(
          fmt::format("tensor %{}: graphs take no {} tensors (no unsigned type wider than a byte, no complex)",
                      tensors[i].uid, accel::to_string(dtype)));
    }
    if (i > 0 && tensors[i - 1].uid == tensors[i].uid) {
      return invalid_argument(fmt::format("uid {} names two tensors", tensors[i].uid));
    }
  }
  auto graph = std::make_shared<Graph>(Graph());
  graph->tensors_ = std::move(tensors);
  const TensorLookup lookup = [g = graph.get()](std::uint32_t uid) { return g->find(uid); };

  // Nodes run in the given order: every input is a graph input or an earlier op's result.
  std::unordered_set<std::uint32_t> produced;
  std::unordered_set<std::uint32_t> consumed;
  for (std::size_t index = 0; index < nodes.size(); ++index) {
    const Node& node = nodes[index];
    const std::string where = fmt::format("op {} ({})", index, node_name(node));
    const NodeTensors io = tensors_of(node);
    for (std::uint32_t uid : io.inputs) {
      const TensorDesc* t = graph->find(uid);
      if (t == nullptr)
        return invalid_argument(fmt::format("{}: input uid {} is not a tensor of the graph", where, uid));
      if (t->is_virtual && !produced.contains(uid)) {
        return invalid_argument(fmt::format("{}: virtual input %{} is not the result of an earlier op", where, uid));
      }
      consumed.insert(uid);
    }
    ACCEL_ASSIGN_OR_RETURN(const std::vector<OutputShape> shapes, infer_outputs(node, lookup));
    for (const OutputShape& shape : shapes) {
      const TensorDesc* t = graph->find(shape.uid);
      if (t == nullptr)
        return invalid_argument(fmt::format("{}: output uid {} is not a tensor of the graph", where, shape.uid));
      if (!std::equal(t->shape().begin(), t->shape().end(), shape.dims.begin(), shape.dims.end())) {
        return invalid_argument(fmt::format("{}: output %{} has dims [{}], the op makes [{}]", where, shape.uid,
                                            fmt::join(t->shape(), ", "), fmt::join(shape.dims, ", ")));
      }
      if (!produced.insert(shape.uid).second || consumed.contains(shape.uid)) {
        return invalid_argument(fmt::format("{}: %{} is written twice or read before it is written", where, shape.uid));
      }
    }
  }
  for (const TensorDesc& t : graph->tensors_) {
    if (t.is_virtual && !consumed.contains(t.uid)) {
      return invalid_argument(fmt::format("%{} is virtual but no op reads it: mark it an output", t.uid));
    }
    if (!produced.contains(t.uid) && !consumed.contains(t.uid)) {
      return invalid_argument(fmt::format("%{} is not used by any op", t.uid));
    }
  }
  graph->nodes_ = std::move(nodes);
  graph->written_.assign(produced.begin(), produced.end());
  std::sort(graph->written_.begin(), graph->written_.end());
  graph->signature_.bytes = encode_graph(graph->tensors_, graph->nodes_);
  graph->signature_.hash = XXH3_64bits(graph->signature_.bytes.data(), graph->signature_.bytes.size());
  return std::shared_ptr<const Graph>(std::move(graph));
}

Result<std::shared_ptr<const Graph>> Graph::decode(std::span<const std::byte> bytes) {
  ACCEL_ASSIGN_OR_RETURN(DecodedGraph decoded, decode_graph(bytes));
  return create(std::move(decoded.tensors), std::move(decoded.nodes));
}

}  // namespace accel::dnn

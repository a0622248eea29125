// The memory plan: each intermediate (and each input, copied in so that a captured run's addresses never move)
// gets a place in one arena. Places are reused by liveness: a tensor's bytes are free after the last step that
// reads it (outputs stay to the end), and tensors are placed largest first at the lowest offset that overlaps no
// tensor alive at the same time. An op that may write over its input (writes_over_input) takes its input's place
// when it is that place's last reader. A gated op keeps the inputs of the matmul that makes its input alive
// (reads_matmul_inputs): a device may run the two as one product, which reads x while it writes the gated output.
#include "graph/executable_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "accel/core/byte_codec.hpp"

namespace accel::graph {

namespace {
constexpr std::uint64_t kAlignment = 256;
// 2: ropes write over their last-read input; 3: a gated op keeps its matmul's inputs alive.
constexpr std::uint32_t kPlanVersion = 3;

std::uint64_t aligned(std::uint64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// The ops whose kernels may write their output over their input (element for element, each read before it is
// written): a rope over a packed q|k|v then leaves v's columns where they are instead of copying them, a quarter of
// its traffic in Qwen3's layers.
bool writes_over_input(const Node& node) { return node.kind == OpKind::rope; }

// Whether `node` may run fused with `producer`, the node that makes its first input, and so read the producer's
// inputs as it writes its output: the CUDA lowering runs a matmul and the gated op after it as one GEMM whose
// epilogue writes the gated output (cuda_steps.cpp), so that output must not take the place of the matmul's x.
bool reads_matmul_inputs(const Node& node, const Node* producer) {
  return node.kind == OpKind::gated && producer != nullptr && producer->kind == OpKind::matmul;
}

// The node that last reads each tensor's place (a reshape's reads count for its source): nodes.size() for the
// graph's outputs, which are read after every step; -1 for a tensor never read.
std::vector<std::int64_t> last_readers(const Graph& graph) {
  const std::vector<Node>& nodes = graph.nodes();
  std::vector<std::uint32_t> source(graph.tensors().size());
  std::iota(source.begin(), source.end(), 0u);
  std::vector<std::int64_t> last(graph.tensors().size(), -1);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind == OpKind::reshape) source[nodes[i].output] = source[nodes[i].inputs[0]];
    for (std::uint32_t in : nodes[i].inputs)
      if (in != Node::kNone) last[source[in]] = static_cast<std::int64_t>(i);
  }
  for (const Graph::Output& out : graph.outputs()) last[source[out.tensor]] = static_cast<std::int64_t>(nodes.size());
  for (std::size_t t = 0; t < source.size(); ++t) last[t] = last[source[t]];
  return last;
}

struct Lifetime {
  std::uint32_t root = 0;
  std::uint64_t bytes = 0;
  std::int64_t first = 0;  // step index that makes it (-1: before the first step)
  std::int64_t last = 0;   // last step index that reads it
};
}  // namespace

std::int64_t evaluate(const Dim& dim, const SymbolValues& values) {
  if (dim.is_constant()) return dim.offset;
  auto it = values.find(dim.symbol);
  return it == values.end() ? 0 : it->second + dim.offset;
}

Status check_sizes(const Graph& graph, const SymbolValues& values) {
  for (const TensorInfo& t : graph.tensors()) {
    std::uint64_t bytes = size_of(t.dtype);
    for (const Dim& d : t.shape) {
      std::int64_t extent = d.offset;
      if (!d.is_constant()) {
        auto it = values.find(d.symbol);
        if (it != values.end() && __builtin_add_overflow(it->second, d.offset, &extent)) extent = -1;
        if (it == values.end()) extent = 1;
      }
      if (extent < 0 || __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(extent), &bytes) ||
          bytes > kMaxTensorBytes)
        return invalid_argument(fmt::format("{} {} is negative or larger than 2^48 bytes{}", t.name, to_string(t.shape),
                                            values.empty() ? "" : " at this binding"));
    }
  }
  return Status();
}

std::uint64_t element_count(const Shape& shape, const SymbolValues& values) {
  std::uint64_t n = 1;
  for (const Dim& d : shape) n *= static_cast<std::uint64_t>(std::max<std::int64_t>(evaluate(d, values), 0));
  return n;
}

Result<ExecutablePlan> ExecutablePlan::make(std::shared_ptr<const Graph> graph, SymbolValues binding) {
  for (const std::string& symbol : graph->symbols()) {
    auto it = binding.find(symbol);
    if (it == binding.end()) return invalid_argument(fmt::format("no value for symbol '{}'", symbol));
    if (it->second < 0) return invalid_argument(fmt::format("symbol '{}' = {} is negative", symbol, it->second));
  }
  ACCEL_RETURN_IF_ERROR(check_sizes(*graph, binding));

  ExecutablePlan plan;
  const std::vector<TensorInfo>& tensors = graph->tensors();
  const std::vector<Node>& nodes = graph->nodes();
  plan.slots_.resize(tensors.size());
  std::vector<std::uint32_t> root(tensors.size());
  std::iota(root.begin(), root.end(), 0u);
  std::vector<Lifetime> lives(tensors.size());
  std::vector<bool> in_arena(tensors.size(), false);
  std::vector<const Node*> producer(tensors.size(), nullptr);
  const std::vector<std::int64_t> last_reader = last_readers(*graph);
  const auto keep_alive = [&](std::uint32_t tensor, std::int64_t index) {
    if (tensor != Node::kNone && in_arena[root[tensor]])
      lives[root[tensor]].last = std::max(lives[root[tensor]].last, index);
  };

  for (const Node& node : nodes) {
    if (node.kind == OpKind::reshape) {
      root[node.output] = root[node.inputs[0]];
      continue;
    }
    if (node.kind == OpKind::parameter) continue;
    const auto index = static_cast<std::int64_t>(plan.steps_.size());
    const auto node_index = static_cast<std::int64_t>(&node - nodes.data());
    if (node.kind != OpKind::input) plan.steps_.push_back(static_cast<std::uint32_t>(node_index));
    // Every input stays alive through this step, the ones beside an input written over included (a rope's
    // positions, which the next op's output must not take).
    for (std::uint32_t in : node.inputs) keep_alive(in, index);
    const std::uint32_t first = node.inputs.empty() ? Node::kNone : node.inputs[0];
    if (first != Node::kNone && reads_matmul_inputs(node, producer[first]))
      for (std::uint32_t in : producer[first]->inputs) keep_alive(in, index);
    producer[node.output] = &node;
    if (writes_over_input(node) && in_arena[root[first]] && last_reader[first] == node_index &&
        tensors[first].shape == tensors[node.output].shape && tensors[first].dtype == tensors[node.output].dtype) {
      root[node.output] = root[first];
      continue;
    }
    in_arena[node.output] = true;
    lives[node.output] = {
        .root = node.output,
        .bytes = aligned(element_count(tensors[node.output].shape, binding) * size_of(tensors[node.output].dtype)),
        .first = node.kind == OpKind::input ? -1 : index,
        .last = index};
  }
  const auto end = static_cast<std::int64_t>(plan.steps_.size());
  for (const Graph::Output& out : graph->outputs())
    if (in_arena[root[out.tensor]]) lives[root[out.tensor]].last = end;

  std::vector<Lifetime*> order;
  for (std::uint32_t t = 0; t < tensors.size(); ++t)
    if (in_arena[t]) order.push_back(&lives[t]);
  std::stable_sort(order.begin(), order.end(),
                   [](const Lifetime* a, const Lifetime* b) { return a->bytes > b->bytes; });
  std::vector<std::pair<const Lifetime*, std::uint64_t>> placed;
  for (Lifetime* life : order) {
    plan.unshared_bytes_ += life->bytes;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;  // [begin, end) of places alive meanwhile
    for (const auto& [other, offset] : placed)
      if (other->first <= life->last && life->first <= other->last) busy.emplace_back(offset, offset + other->bytes);
    std::sort(busy.begin(), busy.end());
    std::uint64_t offset = 0;
    for (const auto& [begin, stop] : busy) {
      if (offset + life->bytes <= begin) break;
      offset = std::max(offset, stop);
    }
    placed.emplace_back(life, offset);
    plan.slots_[life->root] = {.storage = Storage::arena, .offset = offset};
    plan.arena_bytes_ = std::max(plan.arena_bytes_, offset + life->bytes);
  }
  for (const Graph::ParameterSlot& p : graph->parameters())
    plan.slots_[p.tensor] = {.storage = Storage::weights, .offset = p.offset};
  for (std::uint32_t t = 0; t < tensors.size(); ++t) plan.slots_[t] = plan.slots_[root[t]];

  plan.graph_ = std::move(graph);
  plan.binding_ = std::move(binding);
  return plan;
}

std::vector<std::byte> ExecutablePlan::encode() const {
  ByteWriter w;
  w.pod(kPlanVersion).pod(static_cast<std::uint32_t>(binding_.size()));
  for (const auto& [symbol, value] : binding_) w.string(symbol).pod(value);
  w.pods(steps_).pod(arena_bytes_).pod(unshared_bytes_).pod(static_cast<std::uint32_t>(slots_.size()));
  for (const Slot& s : slots_) w.fields(s.storage, s.offset);
  return w.take();
}

Result<ExecutablePlan> ExecutablePlan::decode(std::shared_ptr<const Graph> graph, std::span<const std::byte> bytes) {
  auto damaged = [](std::string_view what) {
    return invalid_argument(fmt::format("executable plan entry is damaged ({})", what));
  };
  ByteReader r(bytes);
  std::uint32_t version = 0, symbols = 0;
  r.fields(version, symbols);
  if (!r.ok() || version != kPlanVersion || symbols != graph->symbols().size()) return damaged("header");
  SymbolValues binding;
  for (std::uint32_t i = 0; i < symbols; ++i) {
    std::string symbol;
    std::int64_t value = 0;
    r.string(symbol).pod(value);
    binding.emplace(std::move(symbol), value);
  }
  // The memory plan is made again from the binding and must be the one stored: an entry is only a witness that
  // this binding was specialised before, never trusted to place tensors.
  ACCEL_ASSIGN_OR_RETURN(ExecutablePlan plan, make(std::move(graph), std::move(binding)));
  std::vector<std::uint32_t> steps;
  std::uint64_t arena = 0, unshared = 0;
  std::uint32_t slots = 0;
  r.pods(steps).fields(arena, unshared, slots);
  if (!r.ok() || steps != plan.steps_ || arena != plan.arena_bytes_ || slots != plan.slots_.size())
    return damaged("memory plan");
  for (const Slot& expected : plan.slots_) {
    Slot s;
    r.fields(s.storage, s.offset);
    if (!r.ok() || !(s == expected)) return damaged("slots");
  }
  if (!r.finished()) return damaged("length");
  return plan;
}

}  // namespace accel::graph

#include "graph/cpu/cpu_bf16_graph.hpp"

#include <algorithm>
#include <cstring>

#include "graph/graph_storage.hpp"
#include "graph/kernels/cpu_kernels.hpp"

namespace accel::graph::cpu {

bool has_bf16(const Graph& graph) noexcept {
  for (const TensorInfo& t : graph.tensors())
    if (t.dtype == DType::bf16) return true;
  return false;
}

Result<std::shared_ptr<const Bf16Graph>> Bf16Graph::make(const Graph& graph) {
  std::shared_ptr<Bf16Graph> made(new Bf16Graph());
  ACCEL_ASSIGN_OR_RETURN(made->f32_, with_f32_storage(graph));
  const Graph& f32 = *made->f32_;
  // The copy keeps every tensor's id and every parameter's order: only the offsets differ.
  if (f32.parameters().size() != graph.parameters().size() || f32.tensors().size() != graph.tensors().size())
    return internal_error("bf16 graph: its f32 copy does not have the graph's tensors");
  std::vector<std::size_t> parameter_of(graph.tensors().size(), graph.parameters().size());
  for (std::size_t i = 0; i < graph.parameters().size(); ++i) {
    const Graph::ParameterSlot& slot = graph.parameters()[i];
    const Graph::ParameterSlot& copy = f32.parameters()[i];
    if (copy.tensor != slot.tensor) return internal_error("bf16 graph: its f32 copy orders the parameters otherwise");
    const DType dtype = graph.tensors()[slot.tensor].dtype;
    made->parameters_.push_back({.tensor = slot.tensor,
                                 .dtype = dtype,
                                 .from = slot.offset,
                                 .to = copy.offset,
                                 .elements = slot.bytes / size_of(dtype)});
    parameter_of[slot.tensor] = i;
  }
  const auto parameter = [&](std::uint32_t tensor) -> Parameter* {
    if (tensor == Node::kNone || parameter_of[tensor] == made->parameters_.size()) return nullptr;
    return &made->parameters_[parameter_of[tensor]];
  };
  for (const Node& node : graph.nodes())
    for (std::size_t i = 0; i < node.inputs.size(); ++i)
      if (Parameter* p = parameter(node.inputs[i])) {
        if (node.kind == OpKind::matmul && i == 1)
          p->matmul_weights = true;
        else
          p->read_otherwise = true;
      }
  for (const Graph::Output& out : graph.outputs())
    if (Parameter* p = parameter(out.tensor)) p->read_otherwise = true;
  made->packed_from_.resize(graph.tensors().size());
  for (const Parameter& p : made->parameters_)
    if (p.matmul_weights && p.dtype == DType::bf16) made->packed_from_[p.tensor] = p.from;
  return std::shared_ptr<const Bf16Graph>(std::move(made));
}

std::optional<std::uint64_t> Bf16Graph::packed_from(std::uint32_t tensor) const noexcept {
  return tensor < packed_from_.size() ? packed_from_[tensor] : std::nullopt;
}

std::shared_ptr<const std::byte[]> Bf16Graph::f32_weights(WeightsIdentity weights) const {
  if (weights.version != 0) {
    std::lock_guard lock(mutex_);
    if (converted_ && converted_for_ == weights) return converted_;
  }
  // Converted outside the lock, as MatmulPacks packs: two first runs may both convert, and the later is kept.
  std::shared_ptr<std::byte[]> copy =
      std::make_shared_for_overwrite<std::byte[]>(std::max<std::uint64_t>(f32_->weight_bytes(), 1));
  for (const Parameter& p : parameters_) {
    if (p.matmul_weights && !p.read_otherwise && p.dtype == DType::bf16) continue;
    if (p.dtype == DType::bf16 || p.dtype == DType::f16)
      static_cast<void>(
          cast(p.dtype, weights.base + p.from, DType::f32, copy.get() + p.to, static_cast<std::int64_t>(p.elements)));
    else  // f32 and i32 keep their dtype in the copy
      std::memcpy(copy.get() + p.to, weights.base + p.from, p.elements * size_of(p.dtype));
  }
  if (weights.version != 0) {
    std::lock_guard lock(mutex_);
    converted_for_ = weights;
    converted_ = copy;
  }
  return copy;
}

}  // namespace accel::graph::cpu

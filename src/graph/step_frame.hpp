// What the CPU and CUDA step interpreters share: a run's view of an executable (each tensor's dims at the run's
// extent, its address in the arena or the weights) and the strided layouts of the data-movement ops.
#pragma once

#include "graph/executable_plan.hpp"
#include "graph/kernels/op_kinds.hpp"

namespace accel::graph {

struct StepFrame {
  const ExecutablePlan& plan;
  const SymbolValues& extent;  // the bucket's values when replaying, the actual ones otherwise
  std::byte* arena;
  const std::byte* weights;

  [[nodiscard]] const TensorInfo& info(std::uint32_t t) const { return plan.graph().tensors()[t]; }
  [[nodiscard]] std::int64_t dim(std::uint32_t t, std::size_t i) const { return evaluate(info(t).shape[i], extent); }
  [[nodiscard]] std::int64_t count(std::uint32_t t) const {
    return static_cast<std::int64_t>(element_count(info(t).shape, extent));
  }
  [[nodiscard]] std::int64_t last_dim(std::uint32_t t) const {
    return info(t).shape.empty() ? 1 : dim(t, info(t).shape.size() - 1);
  }
  // The rows of a tensor seen as [rows, last dim].
  [[nodiscard]] std::int64_t rows(std::uint32_t t) const {
    const std::int64_t w = last_dim(t);
    return w == 0 ? 0 : count(t) / w;
  }
  // The tensor's first element; null for an absent optional input.
  template <class T>
  [[nodiscard]] T* at(std::uint32_t t) const {
    if (t == Node::kNone) return nullptr;
    const Slot& s = plan.slot(t);
    std::byte* base = s.storage == Storage::weights ? const_cast<std::byte*>(weights) : arena;
    return reinterpret_cast<T*>(base + s.offset);
  }
};

// The row-major layout of tensor `t` at the frame's extent.
[[nodiscard]] inline StridedLayout layout_of(const StepFrame& f, std::uint32_t t) {
  StridedLayout layout;
  const auto rank = f.info(t).shape.size();
  layout.rank = static_cast<int>(rank);
  std::int64_t stride = 1;
  for (std::size_t i = rank; i-- > 0;) {
    layout.shape[i] = f.dim(t, i);
    layout.strides[i] = stride;
    stride *= layout.shape[i];
  }
  return layout;
}

// A transpose's input read in its output's order.
[[nodiscard]] inline StridedLayout transpose_layout(const StepFrame& f, const Node& node) {
  const StridedLayout source = layout_of(f, node.inputs[0]);
  StridedLayout layout{.rank = source.rank};
  for (int i = 0; i < source.rank; ++i) {
    layout.shape[i] = source.shape[node.permutation[static_cast<std::size_t>(i)]];
    layout.strides[i] = source.strides[node.permutation[static_cast<std::size_t>(i)]];
  }
  return layout;
}

// Where an attention's q, k and v lie: their first elements (as offsets from their tensor's, in elements) and row
// strides, for separate tensors or q|k|v packed in one.
struct AttentionOperands {
  std::uint32_t q = 0, k = 0, v = 0;
  std::int64_t k_first = 0, v_first = 0;
  std::int64_t q_stride = 0, kv_stride = 0, head_dim = 0;
};
// A rope's head width: its input holds heads (+ 2 kv_heads when packed) of it.
[[nodiscard]] inline int rope_head_dim(const StepFrame& f, const Node& node) {
  return static_cast<int>(f.dim(node.inputs[0], 1) / (std::int64_t{node.heads} + 2 * std::int64_t{node.kv_heads}));
}

[[nodiscard]] inline AttentionOperands attention_operands(const StepFrame& f, const Node& node) {
  const std::uint32_t first = node.inputs[0];
  const std::int64_t width = f.dim(first, 1);
  if (!node.packs_qkv()) {
    return {.q = first,
            .k = node.inputs[1],
            .v = node.inputs[2],
            .q_stride = width,
            .kv_stride = f.dim(node.inputs[1], 1),
            .head_dim = width / node.heads};
  }
  const std::int64_t head_dim = width / (node.heads + 2 * std::int64_t{node.kv_heads});
  return {.q = first,
          .k = first,
          .v = first,
          .k_first = node.heads * head_dim,
          .v_first = (node.heads + std::int64_t{node.kv_heads}) * head_dim,
          .q_stride = width,
          .kv_stride = width,
          .head_dim = head_dim};
}

// A slice's input layout cut to [begin, end) along its axis, and the element where it starts.
struct SliceSource {
  StridedLayout layout;
  std::int64_t first = 0;
};
[[nodiscard]] inline SliceSource slice_source(const StepFrame& f, const Node& node) {
  SliceSource s{.layout = layout_of(f, node.inputs[0])};
  const auto axis = static_cast<std::size_t>(node.axis);
  s.first = node.begin * s.layout.strides[axis];
  s.layout.shape[axis] = node.end - node.begin;
  return s;
}

}  // namespace accel::graph

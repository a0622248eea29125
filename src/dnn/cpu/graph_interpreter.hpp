// The CPU reference implementation of operation graphs: the CPU device's RunGraph, and what GPU tests compare
// against. Every node computes in double on dense copies of its inputs; only bound tensors are converted to
// their dtype, so virtual tensors (fused intermediates) are never rounded.
#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include "accel/core/dtype.hpp"
#include "accel/core/status.hpp"
#include "accel/dnn/graph.hpp"

namespace accel::dnn::cpu {

// The memory bound to a non-virtual tensor: `count` elements of `dtype`, which must cover its storage extent.
struct HostTensor {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::uint64_t count = 0;
};

// Runs every node of `graph` in order. `bound` maps each non-virtual tensor uid to its memory: inputs are read
// and outputs written through the tensor's strides and dtype (f16, bf16 and fp8 round to nearest even).
// Bindings are all checked before any node runs: a missing, unknown, virtual or repeated uid, a dtype other
// than the tensor's or memory short of its storage extent is invalid_argument naming the uid; an output in an
// integer dtype is not_supported.
[[nodiscard]] Status run_graph(const Graph& graph, std::span<const std::pair<std::uint32_t, HostTensor>> bound);

}  // namespace accel::dnn::cpu

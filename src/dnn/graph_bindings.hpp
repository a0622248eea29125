// Resolving a RunGraph's bindings against a device's buffer table: the checks every device makes before it
// runs a graph, so a wrong binding is the same error on the CPU and on CUDA.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "accel/dnn/graph.hpp"
#include "device/buffer_table.hpp"

namespace accel::dnn {

struct BoundTensor {
  std::uint32_t uid = 0;
  BufferHandle handle;
  device::BufferView view;
  bool written = false;  // an output of the graph (else an input)
};

// One BoundTensor per non-virtual tensor, in uid order. Refused: a tensor left unbound, a binding of a uid that
// is not a bound tensor of the graph (or bound twice), a stale or foreign buffer, a buffer of another dtype or
// smaller than the tensor's storage extent, an output bound to the same buffer as another tensor.
[[nodiscard]] Result<std::vector<BoundTensor>> resolve_bindings(const Graph& graph,
                                                                std::span<const TensorBinding> bindings,
                                                                const device::BufferTable& table);

}  // namespace accel::dnn

#include "dnn/graph_bindings.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace accel::dnn {

Result<std::vector<BoundTensor>> resolve_bindings(const Graph& graph, std::span<const TensorBinding> bindings,
                                                  const device::BufferTable& table) {
  std::vector<BoundTensor> bound;
  bound.reserve(bindings.size());
  for (const TensorBinding& binding : bindings) {
    const TensorDesc* tensor = graph.find(binding.uid);
    if (tensor == nullptr || tensor->is_virtual) {
      return invalid_argument(
          fmt::format("RunGraph: uid {} is not a bound (non-virtual) tensor of the graph", binding.uid));
    }
    const std::string role = fmt::format("tensor %{}", binding.uid);
    ACCEL_ASSIGN_OR_RETURN(const device::BufferView view,
                           table.resolve_range(binding.buffer, role, 0, storage_extent(*tensor)));
    if (view.dtype != tensor->dtype) {
      return invalid_argument(fmt::format("RunGraph: {} is {} but its buffer holds {}", role,
                                          accel::to_string(tensor->dtype), accel::to_string(view.dtype)));
    }
    bound.push_back({binding.uid, binding.buffer, view, graph.writes(binding.uid)});
  }
  std::sort(bound.begin(), bound.end(), [](const BoundTensor& a, const BoundTensor& b) { return a.uid < b.uid; });
  for (std::size_t i = 1; i < bound.size(); ++i) {
    if (bound[i].uid == bound[i - 1].uid) {
      return invalid_argument(fmt::format("RunGraph: tensor %{} is bound twice", bound[i].uid));
    }
  }
  const std::vector<std::uint32_t> wanted = graph.bound_uids();
  if (bound.size() != wanted.size()) {
    for (std::uint32_t uid : wanted) {
      const bool present = std::any_of(bound.begin(), bound.end(), [&](const BoundTensor& b) { return b.uid == uid; });
      if (!present) return invalid_argument(fmt::format("RunGraph: tensor %{} is not bound to a buffer", uid));
    }
  }
  for (const BoundTensor& out : bound) {
    if (!out.written) continue;
    for (const BoundTensor& other : bound) {
      if (other.uid != out.uid && other.view.data == out.view.data) {
        return invalid_argument(
            fmt::format("RunGraph: output %{} shares its buffer with tensor %{}", out.uid, other.uid));
      }
    }
  }
  return bound;
}

}  // namespace accel::dnn

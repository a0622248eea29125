#include "graph/cpu/cpu_matmul_packs.hpp"

namespace accel::graph::cpu {

Result<std::shared_ptr<const PackedMatmul>> MatmulPacks::get(const Matmul& matmul, WeightsIdentity weights) {
  if (weights.version != 0) {
    std::lock_guard lock(mutex_);
    auto found = by_node_.find(matmul.node);
    if (found != by_node_.end() && found->second.weights == weights) return found->second.packed;
  }
  // Packed outside the lock: two first runs may both pack, and the later one is kept; neither waits on the other.
  Result<std::unique_ptr<PackedMatmul>> made =
      PackedMatmul::make(matmul.w, matmul.transpose_w, matmul.bias, matmul.k, matmul.n, matmul.activation,
                         matmul.precision, matmul.w_dtype);
  if (!made.ok()) return made.status();
  std::shared_ptr<const PackedMatmul> packed = std::move(made).value();
  if (weights.version != 0) {
    std::lock_guard lock(mutex_);
    by_node_[matmul.node] = Entry{weights, packed};
  }
  return packed;
}

}  // namespace accel::graph::cpu

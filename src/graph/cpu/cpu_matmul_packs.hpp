// The packed weights of one CPU executable's matmuls (kernels/cpu_packed_matmul.hpp), made on a matmul's first
// run with a weights buffer and kept for as long as that buffer holds the same contents. The device gives each
// write of a buffer a version never reused, so (address, version) names the contents: a new model or rewritten
// weights pack again, the same weights never do. A buffer without a version (0: not tracked) packs on every run,
// never reusing what may be stale.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "accel/core/dtype.hpp"
#include "accel/core/epilogue.hpp"
#include "accel/core/result.hpp"
#include "graph/kernels/cpu_packed_matmul.hpp"

namespace accel::graph::cpu {

struct WeightsIdentity {
  const std::byte* base = nullptr;
  std::uint64_t version = 0;
  friend bool operator==(const WeightsIdentity&, const WeightsIdentity&) = default;
};

class MatmulPacks {
 public:
  struct Matmul {
    std::uint32_t node = 0;  // the node's index in its graph
    const void* w = nullptr;
    DType w_dtype = DType::f32;  // bf16: a bf16 graph's weights, packed as they are for a bf16 product
    bool transpose_w = false;
    const float* bias = nullptr;
    std::int64_t k = 0, n = 0;
    Activation activation = Activation::identity;
    MatmulPrecision precision = MatmulPrecision::f32;
  };

  // The matmul's packed weights for these weights' contents, packing them if this is their first use.
  [[nodiscard]] Result<std::shared_ptr<const PackedMatmul>> get(const Matmul& matmul, WeightsIdentity weights);

 private:
  struct Entry {
    WeightsIdentity weights;
    std::shared_ptr<const PackedMatmul> packed;
  };
  std::mutex mutex_;
  std::unordered_map<std::uint32_t, Entry> by_node_;
};

}  // namespace accel::graph::cpu

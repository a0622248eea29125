// A bf16 graph on the CPU device. The CPU keeps a bf16 graph's activations in f32 between ops (its LayerNorm,
// softmax, attention and every sum are f32's) and runs the matmuls whose weights are parameters in bf16: their
// weights are packed once, from the bf16 the caller's weights buffer holds, and each run's input rows are rounded to
// bf16 on their way in, the products summed in f32 (kernels/cpu_packed_matmul.hpp). So the executable plans the
// graph's f32 copy (graph_storage.hpp), and the other parameters (norms, biases, embedding tables) are converted to
// f32 once per contents of the weights buffer. Only on CPUs with avx512_bf16 or AMX (check_support refuses the
// graph elsewhere).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/graph/graph.hpp"
#include "graph/cpu/cpu_matmul_packs.hpp"

namespace accel::graph::cpu {

// Whether a tensor of `graph` is bf16 (its executable then plans the f32 copy).
[[nodiscard]] bool has_bf16(const Graph& graph) noexcept;

class Bf16Graph {
 public:
  // `graph`'s f32 copy and where `graph`'s parameters lie in the caller's weights buffer.
  [[nodiscard]] static Result<std::shared_ptr<const Bf16Graph>> make(const Graph& graph);

  // The graph the executable plans and runs.
  [[nodiscard]] const std::shared_ptr<const Graph>& f32() const noexcept { return f32_; }
  // Where a bf16 parameter read as a matmul's weights lies in the caller's buffer (the matmul packs it from there);
  // nothing for any other tensor.
  [[nodiscard]] std::optional<std::uint64_t> packed_from(std::uint32_t tensor) const noexcept;
  // The f32 copy's weights buffer for the caller's (`weights` with these contents): every parameter converted to
  // f32 at its place in the copy, but those only matmuls read (packed_from), whose places are never written. Made
  // on the first run with these contents and kept while they last; a buffer without a version converts every run.
  [[nodiscard]] std::shared_ptr<const std::byte[]> f32_weights(WeightsIdentity weights) const;

 private:
  struct Parameter {
    std::uint32_t tensor = 0;
    DType dtype = DType::f32;  // in the caller's buffer
    std::uint64_t from = 0;    // its offset there
    std::uint64_t to = 0;      // its offset in the f32 copy's
    std::uint64_t elements = 0;
    bool matmul_weights = false;  // read as a matmul's weights
    bool read_otherwise = false;  // read by another op or as an output
  };
  Bf16Graph() = default;

  std::shared_ptr<const Graph> f32_;
  std::vector<Parameter> parameters_;
  std::vector<std::optional<std::uint64_t>> packed_from_;  // by tensor
  mutable std::mutex mutex_;
  mutable WeightsIdentity converted_for_;
  mutable std::shared_ptr<const std::byte[]> converted_;
};

}  // namespace accel::graph::cpu

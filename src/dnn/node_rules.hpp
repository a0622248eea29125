// What each op reads, writes, and which dims its outputs must have: the one place the graph's builder, its
// validation and its decoder learn an op's rules from.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/dnn/nodes.hpp"
#include "accel/dnn/tensor.hpp"

namespace accel::dnn {

struct NodeTensors {
  std::vector<std::uint32_t> inputs;   // present ones only
  std::vector<std::uint32_t> outputs;  // present ones only
};
[[nodiscard]] NodeTensors tensors_of(const Node& node);

struct OutputShape {
  std::uint32_t uid = 0;
  std::vector<std::int64_t> dims;
};

// The tensor of a uid, or null.
using TensorLookup = std::function<const TensorDesc*(std::uint32_t)>;

// Checks the op's parameters and its inputs' dims and dtypes, and returns the dims each output must have.
// Outputs whose dims the caller states (backward convolutions, reductions, reshapes) must already exist;
// the others need not.
[[nodiscard]] Result<std::vector<OutputShape>> infer_outputs(const Node& node, const TensorLookup& lookup);

}  // namespace accel::dnn

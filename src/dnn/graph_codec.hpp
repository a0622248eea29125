// The canonical byte encoding of a graph: its signature, and how a graph crosses to an isolated worker.
//
// Every field is written explicitly (no struct padding, no pointers), little-endian as the host is, in uid
// order for tensors and execution order for nodes; a leading format byte changes whenever the layout does.
// Two graphs have equal encodings exactly when they would build the same plan.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "accel/core/byte_codec.hpp"
#include "accel/core/result.hpp"
#include "accel/dnn/nodes.hpp"
#include "accel/dnn/tensor.hpp"

namespace accel::dnn {

inline constexpr std::byte kGraphEncodingFormat{1};

[[nodiscard]] std::vector<std::byte> encode_graph(std::span<const TensorDesc> tensors, std::span<const Node> nodes);

struct DecodedGraph {
  std::vector<TensorDesc> tensors;
  std::vector<Node> nodes;
};
// Reads an encoding back; invalid_argument for bytes that are not one (cut short, unknown op, bad rank).
[[nodiscard]] Result<DecodedGraph> decode_graph(std::span<const std::byte> bytes);

}  // namespace accel::dnn

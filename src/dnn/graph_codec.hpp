// The canonical byte encoding of a graph: its signature, and how a graph crosses to an isolated worker.
//
// Every field is written explicitly (no struct padding, no pointers), little-endian as the host is, in uid
// order for tensors and execution order for nodes; a leading format byte changes whenever the layout does.
// Two graphs have equal encodings exactly when they would build the same plan.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/dnn/nodes.hpp"
#include "accel/dnn/tensor.hpp"

namespace accel::dnn {

inline constexpr std::byte kGraphEncodingFormat{1};

// Appends fields as their bytes, one by one (never a struct with its padding): what graph encodings and plan
// keys are made of.
class FieldWriter {
 public:
  explicit FieldWriter(std::vector<std::byte>& out) : out_(out) {}
  template <class... T>
  void operator()(const T&... values) {
    (put(values), ...);
  }
  template <class T>
  void put(const T& value) {
    static_assert(std::has_unique_object_representations_v<T> || std::is_floating_point_v<T> ||
                  std::is_same_v<T, bool>);
    const std::size_t at = out_.size();
    out_.resize(at + sizeof value);
    std::memcpy(out_.data() + at, &value, sizeof value);
  }

 private:
  std::vector<std::byte>& out_;
};

[[nodiscard]] std::vector<std::byte> encode_graph(std::span<const TensorDesc> tensors, std::span<const Node> nodes);

struct DecodedGraph {
  std::vector<TensorDesc> tensors;
  std::vector<Node> nodes;
};
// Reads an encoding back; invalid_argument for bytes that are not one (cut short, unknown op, bad rank).
[[nodiscard]] Result<DecodedGraph> decode_graph(std::span<const std::byte> bytes);

}  // namespace accel::dnn

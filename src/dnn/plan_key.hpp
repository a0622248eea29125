// What keys a plan in memory: a kind byte, then either a convolution request's shape (field by field, so the
// key costs no graph to compute) or a graph's signature. Equal keys describe equal graphs: a convolution key
// determines its graph (graph_of) exactly as a signature does.
#pragma once

#include <cstddef>
#include <vector>

#include "accel/dnn/convolution.hpp"
#include "accel/dnn/graph.hpp"

namespace accel::dnn {

[[nodiscard]] std::vector<std::byte> plan_key(const ConvFwd& request);
[[nodiscard]] std::vector<std::byte> plan_key(const ConvBwdData& request);
[[nodiscard]] std::vector<std::byte> plan_key(const ConvBwdFilter& request);
[[nodiscard]] std::vector<std::byte> plan_key(const Graph& graph);

}  // namespace accel::dnn

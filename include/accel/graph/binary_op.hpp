/// @file
/// The elementwise binary ops of tensor graphs, shared by the graph (graph.hpp) and its kernels.
#pragma once

#include <cstdint>

namespace accel::graph {

/// a + b, a - b, a * b or a / b, elementwise.
enum class BinaryOp : std::uint8_t { add, sub, mul, div };

}  // namespace accel::graph

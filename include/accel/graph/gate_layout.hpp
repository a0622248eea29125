/// @file
/// Where a graph's `gated` op finds each output's gate and up columns, shared by the graph (graph.hpp) and its
/// kernels.
#pragma once

#include <cstdint>

namespace accel::graph {

/// The layout of a gated op's input x [R, 2 W].
enum class GateLayout : std::uint8_t {
  halves,       ///< gate j is column j, its up column W + j: two stacked projections' product (SwiGLU, GeGLU)
  groups_of_8,  ///< columns alternate in groups of 8: gate 8 i + j is column 16 i + j, its up 16 i + 8 + j (W % 8 ==
                ///< 0); what a GPU's fused gated product reads from its accumulators
};

}  // namespace accel::graph

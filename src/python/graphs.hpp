// What graphs.cpp (accel.Graph, Device.execute) and graph_builder.cpp (accel.GraphBuilder) share.
#pragma once

#include <memory>
#include <string_view>

#include "python/request_fields.hpp"

#include "accel/graph/graph.hpp"

namespace accel::python {

template <>
struct EnumNames<graph::BinaryOp> {
  static constexpr const char* python_name = "BinaryOp";
  static constexpr std::array values{std::pair{graph::BinaryOp::add, "add"}, std::pair{graph::BinaryOp::sub, "sub"},
                                     std::pair{graph::BinaryOp::mul, "mul"}, std::pair{graph::BinaryOp::div, "div"}};
};
template <>
struct EnumNames<graph::Padding> {
  static constexpr const char* python_name = "Padding";
  static constexpr std::array values{std::pair{graph::Padding::zero, "zero"},
                                     std::pair{graph::Padding::repeat_last, "repeat_last"}};
};
template <>
struct EnumNames<graph::PoolMode> {
  static constexpr const char* python_name = "PoolMode";
  static constexpr std::array values{std::pair{graph::PoolMode::mean, "mean"},
                                     std::pair{graph::PoolMode::max, "max"},
                                     std::pair{graph::PoolMode::first, "first"},
                                     std::pair{graph::PoolMode::last, "last"},
                                     std::pair{graph::PoolMode::mean_sqrt_length, "mean_sqrt_length"},
                                     std::pair{graph::PoolMode::weighted_mean, "weighted_mean"}};
};
template <>
struct EnumNames<graph::GateLayout> {
  static constexpr const char* python_name = "GateLayout";
  static constexpr std::array values{std::pair{graph::GateLayout::halves, "halves"},
                                     std::pair{graph::GateLayout::groups_of_8, "groups_of_8"}};
};
// A built graph as Python holds it (accel.Graph).
struct PyGraph {
  std::shared_ptr<const graph::Graph> graph;
};

// A dimension from Python: an int (a constant), a symbol ("tokens"), a symbol plus or minus an int
// ("sequences + 1"), or a (symbol, int) pair. InvalidArgument naming the builder's method `op` otherwise.
graph::Dim dim_of(nb::handle value, std::string_view op);
// A sequence of such dimensions.
graph::Shape shape_of(nb::handle value, std::string_view op);

// accel.GraphBuilder (graph_builder.cpp), after accel.Graph and accel.GraphTensor are bound.
void bind_graph_builder(nb::module_& module);

}  // namespace accel::python

/// @file
/// The compiled-graph family's entry point: graph::execute sends an Execute request (accel/graph/execute.hpp) to
/// `device` and answers with its future, as Device::ask would.
///
/// @code
///   accel::graph::execute(device, {.graph = graph, .symbols = {{"tokens", 512}}, .weights = weights,
///                                  .inputs = {{"ids", ids}}, .outputs = {{"out", out}}}).wait();
/// @endcode
#pragma once

#include "accel/device/device.hpp"
#include "accel/graph/execute.hpp"

namespace accel::graph {

/// Runs a built graph with its symbols bound (compiled on first use, its executable cached): see Execute.
inline Future<Done> execute(const Device& device, Execute request) { return device.ask(std::move(request)); }

}  // namespace accel::graph

/// @file
/// graph::Execute — runs a built Graph (graph.hpp) on a device for the actual values of its symbols:
///
/// @code
///   graph::Execute run{.graph = graph,
///                      .symbols = {{"tokens", 1234}, {"sequences", 17}},
///                      .weights = weights,                      // u8 buffer laid out as graph->parameters() say
///                      .inputs = {{"ids", ids}, {"offsets", offsets}},
///                      .outputs = {{"pooled", pooled}}};
///   Status s = device.ask(run).wait().status();
/// @endcode
///
/// Every input and output is bound by name exactly once, to a buffer of its dtype holding the tensor's elements at
/// the actual symbol values from the binding's `first` element on (several inputs may share one buffer, so that one
/// upload fills them all); a name the graph does not have, a missing binding, a wrong dtype or a short buffer is an
/// error naming it, before anything runs. An output shares its buffer with no other binding. A symbol above its bucket
/// ladder's top is refused.
///
/// The device runs the executable of the binding: for a bucketed symbol, that of the smallest rung at or above
/// the value (inputs padded on the device as the graph's Padding says, outputs cut to the actual rows); otherwise
/// that of the exact value. Executables are compiled once and cached (graph/executable_cache.hpp); weights are
/// never copied into them, so every variant shares the one weights buffer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/protocol.hpp"
#include "accel/graph/graph.hpp"

namespace accel::graph {

/// A buffer bound to a graph input or output by its binding name.
struct NamedBuffer {
  std::string name;         ///< the input's or output's binding name
  BufferHandle buffer;      ///< the buffer bound to it
  std::uint64_t first = 0;  ///< the element of `buffer` where the tensor starts
};

/// How a CUDA device runs an executable.
enum class ExecuteMode : std::uint8_t {
  automatic,  ///< replay, unless the actual rows fill less than ExecuteOptions::direct_below of the bucket
  replay,     ///< the bucket's CUDA graph, captured once, replayed (every op at the bucket's extent)
  direct,     ///< each op launched at the actual extent ("active extent"; matmul and attention included)
};

/// Runs a built graph on the device with its symbols bound (see the file's description).
struct Execute {
  static constexpr const char* kName = "graph::Execute";
  using Response = Done;

  std::shared_ptr<const Graph> graph;  ///< the graph to run
  SymbolValues symbols;                ///< the value of every symbol of the graph
  BufferHandle weights;                ///< DType::u8, graph->weight_bytes() long; null when the graph has no parameters
  std::vector<NamedBuffer> inputs;     ///< a buffer for every input of the graph
  std::vector<NamedBuffer> outputs;    ///< a buffer for every output of the graph
  /// replay the bucket's CUDA graph, launch each op directly, or choose by the fill of the bucket
  ExecuteMode mode = ExecuteMode::automatic;
  /// automatic: run directly when actual rows / bucket rows is below this fraction. 0 (always replay) until the
  /// crossover is measured on a GPU (graph_execute_bench's "modes" figure; docs/PERFORMANCE.md, section 9).
  float direct_below = 0.0f;
};

using Requests = RequestList<Execute>;  ///< The requests of the graph family, as the device protocol registers them.

}  // namespace accel::graph

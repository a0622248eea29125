// graph::ExecutablePlan::decode: a persistent cache entry's memory plan, for a graph the cache already holds
// (the encoder layer the graph tests run). An entry is only a witness that its binding was planned before; the
// plan is made again from the binding, so any binding in an entry must be refused or planned, never trusted.
#include <cstddef>
#include <cstdint>
#include <span>

#include "graph/executable_plan.hpp"
#include "testing/encoder_graph.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel::graph;
  static const std::shared_ptr<const Graph> graph = testing::encoder_graph({}, {{16, 64}}, {{2, 4}});
  (void)ExecutablePlan::decode(graph, std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  return 0;
}

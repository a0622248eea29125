// accel::graph::Graph::decode: a compiled graph's encoding (what a staged graph::Execute carries, and what keys
// its executables), replayed through the builder. A graph that decodes re-encodes to the same bytes, and its
// memory plan can be made for a binding of its symbols.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "graph/executable_plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel::graph;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  accel::Result<std::shared_ptr<const Graph>> graph = Graph::decode(bytes);
  if (!graph.ok()) return 0;
  if ((*graph)->encoding() != std::vector<std::byte>(bytes.begin(), bytes.end())) std::abort();
  // Every symbol at 1: small enough that the plan is cheap, large enough that nothing is empty.
  SymbolValues binding;
  for (const auto& symbol : (*graph)->symbols()) binding.emplace(symbol, 1);
  (void)ExecutablePlan::make(*graph, std::move(binding));
  return 0;
}

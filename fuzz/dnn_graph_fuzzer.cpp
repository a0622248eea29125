// accel::dnn::Graph::decode: an operation graph's encoding (what a staged RunGraph carries), checked as a
// built graph is. A graph that decodes has a signature that decodes to itself, with the same plan key: equal
// keys must mean equal graphs (dnn/plan_key.hpp).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "accel/dnn/graph.hpp"
#include "dnn/plan_key.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using accel::dnn::Graph;
  auto graph = Graph::decode(std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  if (!graph.ok()) return 0;
  auto again = Graph::decode((*graph)->signature().bytes);
  if (!again.ok() || !((*again)->signature() == (*graph)->signature())) std::abort();
  if (accel::dnn::plan_key(**again) != accel::dnn::plan_key(**graph)) std::abort();
  return 0;
}

// A graph's tensors stored in another dtype than the one it was built with: the same ops, tensor ids, names,
// outputs and buckets, each floating tensor (f16, bf16, f64) made f32. The CPU device runs a bf16 graph this way
// (cpu/cpu_executables.hpp): its activations are kept in f32 between ops, its matmuls take bf16 weights.
#pragma once

#include <memory>

#include "accel/core/result.hpp"
#include "accel/graph/graph.hpp"

namespace accel::graph {

// `graph` with every floating tensor f32 (its inputs, parameters and casts made f32; every other op's dtype follows
// by inference). Its parameters are laid out for f32, so its weights buffer is not `graph`'s.
[[nodiscard]] Result<std::shared_ptr<const Graph>> with_f32_storage(const Graph& graph);

}  // namespace accel::graph

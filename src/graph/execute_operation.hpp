// The operation contract of graph::Execute (Note [The operation contract] in operation/operation.hpp): the
// request's names matched to the graph's inputs and outputs, its symbols to the bucket each runs in; operands are
// the weights, then the inputs and the outputs in the graph's order. CPU: the executable run at the actual extent
// (cpu_executor.hpp). CUDA: cuda/execute_operation_cuda.hpp.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "accel/core/byte_codec.hpp"
#include "accel/graph/execute.hpp"
#include "cache/hashed_key.hpp"
#include "operation/operation.hpp"

namespace accel {

namespace graph {

struct CheckedExecute {
  std::shared_ptr<const Graph> graph;
  SymbolValues actual;                // the request's values
  SymbolValues compiled;              // the rung of each bucketed symbol, the value itself otherwise
  std::vector<BufferHandle> inputs;   // in the order of the graph's input nodes (parameters excluded)
  std::vector<BufferHandle> outputs;  // in the order of graph->outputs()
  std::vector<std::uint64_t> input_firsts, output_firsts;  // the element of each buffer where its tensor starts
  std::vector<std::uint32_t> input_tensors;
  std::shared_ptr<const cache::HashedKey> key;  // of the executable of (graph, compiled): executable_key's
};

// The compiled binding of `actual`: each bucketed symbol at its rung. Refuses a value above a ladder's top,
// naming the symbol.
[[nodiscard]] Result<SymbolValues> bucket_binding(const Graph& graph, const SymbolValues& actual);

// The bytes that key an executable: the graph's encoding and the compiled binding. Byte for byte, never a caller's
// number. What an executable depends on beyond them (the device and library versions) is its cache's: each device
// kind and stream has a cache of its own, whose disk keys begin with it (executable_cache_options.hpp).
[[nodiscard]] std::vector<std::byte> executable_key(const Graph& graph, const SymbolValues& compiled);

// Whether a device that captures runs (CUDA) replays this one as its bucket's captured graph rather than launching
// each op at the actual extent: ExecuteMode::replay always, direct never, automatic unless the actual value of some
// bucketed symbol fills less than `direct_below` of its rung. None is replayed while `captures_unsafe`: cuBLASLt's
// start-up running on its thread, whose calls may invalidate a capture (docs/PERFORMANCE.md §66).
[[nodiscard]] bool replays(const Execute& request, const CheckedExecute& checked, bool captures_unsafe) noexcept;

}  // namespace graph

template <>
struct Operation<graph::Execute> {
  using Checked = graph::CheckedExecute;
  enum Slot : std::size_t { weights };

  static Result<Checked> validate(const graph::Execute& request);
  static void operands(const graph::Execute& request, const Checked& checked, Operands& operands);
  static Status check_cpu_support(const Checked& checked);
  static Status run_cpu(const graph::Execute& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);

  // Not plain data: crosses to an isolated worker as the graph's encoding, the symbols and the bindings; the
  // worker decodes and validates the graph again.
  static void encode(ByteWriter& out, const graph::Execute& request);
  static Result<graph::Execute> decode(ByteReader& in);
};

}  // namespace accel

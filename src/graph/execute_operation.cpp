#include "graph/execute_operation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "cache/cache.hpp"
#include "graph/cpu/cpu_executables.hpp"
#include "graph/executable_plan.hpp"

namespace accel {

namespace graph {

Result<SymbolValues> bucket_binding(const Graph& graph, const SymbolValues& actual) {
  SymbolValues compiled = actual;
  for (const auto& [symbol, ladder] : graph.buckets()) {
    auto it = compiled.find(symbol);
    if (it == compiled.end()) continue;
    Result<std::int64_t> rung = ladder.rung_for(it->second);
    if (!rung.ok())
      return invalid_argument(fmt::format("symbol '{}' = {}: {}", symbol, it->second, rung.status().message()));
    it->second = *rung;
  }
  return compiled;
}

std::vector<std::byte> executable_key(const Graph& graph, const SymbolValues& compiled) {
  ByteWriter w;
  w.bytes(graph.encoding()).pod(static_cast<std::uint32_t>(compiled.size()));
  for (const auto& [symbol, value] : compiled) w.string(symbol).pod(value);
  return w.take();
}

bool replays(const Execute& request, const CheckedExecute& checked, bool captures_unsafe) noexcept {
  if (captures_unsafe) return false;
  switch (request.mode) {
    case ExecuteMode::replay: return true;
    case ExecuteMode::direct: return false;
    case ExecuteMode::automatic: break;
  }
  // How full the buckets are: the smallest actual / rung over the bucketed symbols (1 when none is padded).
  float fill = 1.0f;
  for (const auto& [symbol, rung] : checked.compiled) {
    const auto actual = checked.actual.find(symbol);
    if (actual != checked.actual.end() && rung > 0 && actual->second < rung)
      fill = std::min(fill, static_cast<float>(actual->second) / static_cast<float>(rung));
  }
  return fill >= request.direct_below;
}

}  // namespace graph

namespace {

// The compiled bindings seen, by graph: each one's sizes are checked and its executable's key made and hashed once,
// not at every run (the check walks every tensor's shape, and the key holds the graph's whole encoding: µs of the
// host's time before a replayed graph can start, docs/PERFORMANCE.md §54 and §55). Graphs are told apart by owner, so a
// graph freed and another made at its address are never confused. The last one found is looked at first (a stream of
// queries runs one binding); bounded by clearing.
class CompiledBindings {
 public:
  Result<std::shared_ptr<const cache::HashedKey>> key_of(const std::shared_ptr<const graph::Graph>& graph,
                                                         const graph::SymbolValues& binding) {
    {
      std::lock_guard lock(mutex_);
      for (std::size_t i = 0; i < entries_.size(); ++i) {
        if (!same_owner(entries_[i].graph, graph) || entries_[i].binding != binding) continue;
        if (i != 0) std::swap(entries_[0], entries_[i]);
        return entries_[0].key;
      }
    }
    ACCEL_RETURN_IF_ERROR(graph::check_sizes(*graph, binding));
    auto key = std::make_shared<const cache::HashedKey>(cache::HashedKey::of(graph::executable_key(*graph, binding)));
    std::lock_guard lock(mutex_);
    if (entries_.size() >= kMostEntries) entries_.clear();
    entries_.push_back({graph, binding, key});
    std::swap(entries_.front(), entries_.back());
    return key;
  }

 private:
  static constexpr std::size_t kMostEntries = 256;
  struct Entry {
    std::weak_ptr<const graph::Graph> graph;
    graph::SymbolValues binding;
    std::shared_ptr<const cache::HashedKey> key;
  };
  static bool same_owner(const std::weak_ptr<const graph::Graph>& a, const std::shared_ptr<const graph::Graph>& b) {
    return !a.owner_before(b) && !b.owner_before(a);
  }
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

CompiledBindings& compiled_bindings() {
  static CompiledBindings bindings;
  return bindings;
}

// Binds each of `wanted` (tensor names, in the graph's order) to the request's buffer of that name and the element
// where the tensor starts in it, refusing unknown, repeated and missing names.
Status match(std::string_view what, const std::vector<graph::NamedBuffer>& given,
             const std::vector<std::string>& wanted, std::vector<BufferHandle>& out,
             std::vector<std::uint64_t>& firsts) {
  out.assign(wanted.size(), BufferHandle{});
  firsts.assign(wanted.size(), 0);
  std::vector<bool> bound(wanted.size(), false);
  for (const graph::NamedBuffer& b : given) {
    auto it = std::find(wanted.begin(), wanted.end(), b.name);
    if (it == wanted.end())
      return invalid_argument(fmt::format("graph::Execute: the graph has no {} '{}'", what, b.name));
    const auto index = static_cast<std::size_t>(it - wanted.begin());
    if (bound[index]) return invalid_argument(fmt::format("graph::Execute: {} '{}' is bound twice", what, b.name));
    if (b.buffer.is_null())
      return invalid_argument(fmt::format("graph::Execute: {} '{}' is a null buffer", what, b.name));
    bound[index] = true;
    out[index] = b.buffer;
    firsts[index] = b.first;
  }
  for (std::size_t i = 0; i < wanted.size(); ++i)
    if (!bound[i]) return invalid_argument(fmt::format("graph::Execute: {} '{}' is not bound", what, wanted[i]));
  return Status();
}

}  // namespace

Result<graph::CheckedExecute> Operation<graph::Execute>::validate(const graph::Execute& request) {
  if (request.graph == nullptr) return invalid_argument("graph::Execute: no graph");
  const graph::Graph& g = *request.graph;
  graph::CheckedExecute checked{.graph = request.graph, .actual = request.symbols};
  for (const auto& [symbol, value] : request.symbols) {
    if (!std::binary_search(g.symbols().begin(), g.symbols().end(), symbol))
      return invalid_argument(fmt::format("graph::Execute: the graph has no symbol '{}'", symbol));
    if (value < 0) return invalid_argument(fmt::format("graph::Execute: symbol '{}' = {} is negative", symbol, value));
  }
  for (const std::string& symbol : g.symbols())
    if (!request.symbols.contains(symbol))
      return invalid_argument(fmt::format("graph::Execute: no value for symbol '{}'", symbol));
  ACCEL_ASSIGN_OR_RETURN(checked.compiled, graph::bucket_binding(g, request.symbols));
  // Every rung is at least its value, so sizes that fit at the compiled binding fit at the actual one.
  ACCEL_ASSIGN_OR_RETURN(checked.key, compiled_bindings().key_of(request.graph, checked.compiled));

  std::vector<std::string> input_names;
  for (std::uint32_t index : g.inputs()) {
    const graph::Node& node = g.nodes()[index];
    if (node.kind != graph::OpKind::input) continue;
    input_names.push_back(g.tensors()[node.output].name);
    checked.input_tensors.push_back(node.output);
  }
  std::vector<std::string> output_names;
  for (const graph::Graph::Output& out : g.outputs()) output_names.push_back(out.name);
  ACCEL_RETURN_IF_ERROR(match("input", request.inputs, input_names, checked.inputs, checked.input_firsts));
  ACCEL_RETURN_IF_ERROR(match("output", request.outputs, output_names, checked.outputs, checked.output_firsts));
  if (g.weight_bytes() != 0 && request.weights.is_null())
    return invalid_argument("graph::Execute: the graph has parameters and no weights buffer is bound");
  return checked;
}

void Operation<graph::Execute>::operands(const graph::Execute& request, const graph::CheckedExecute& checked,
                                         Operands& list) {
  const graph::Graph& g = *checked.graph;
  if (g.weight_bytes() == 0) {
    list.absent("weights");
  } else {
    list.typed(request.weights, "weights", Access::read, DType::u8, g.weight_bytes());
  }
  for (std::size_t i = 0; i < checked.inputs.size(); ++i) {
    const graph::TensorInfo& t = g.tensors()[checked.input_tensors[i]];
    list.add({.buffer = checked.inputs[i],
              .name = fmt::format("input '{}'", t.name),
              .access = Access::read,
              .first = checked.input_firsts[i],
              .count = graph::element_count(t.shape, checked.actual),
              .check_dtype = true,
              .dtype = t.dtype});
  }
  for (std::size_t i = 0; i < checked.outputs.size(); ++i) {
    const graph::Graph::Output& out = g.outputs()[i];
    const graph::TensorInfo& t = g.tensors()[out.tensor];
    list.add({.buffer = checked.outputs[i],
              .name = fmt::format("output '{}'", out.name),
              .access = Access::write,
              .first = checked.output_firsts[i],
              .count = graph::element_count(t.shape, checked.actual),
              .check_dtype = true,
              .dtype = t.dtype,
              .exclusive = true});
  }
}

Status Operation<graph::Execute>::check_cpu_support(const graph::CheckedExecute& checked) {
  return graph::cpu::check_support(*checked.graph);
}

Status Operation<graph::Execute>::run_cpu(const graph::Execute&, const graph::CheckedExecute& checked,
                                          std::span<const BufferView> views, const CpuTarget&) {
  return graph::cpu::CpuExecutables::process().run(checked, views);
}

void Operation<graph::Execute>::describe_cpu(LibraryReport& report) {
  report.report(graph::cpu::CpuExecutables::process().stats());
}

void Operation<graph::Execute>::encode(ByteWriter& out, const graph::Execute& request) {
  out.bytes(request.graph->encoding()).pod(static_cast<std::uint32_t>(request.symbols.size()));
  for (const auto& [symbol, value] : request.symbols) out.string(symbol).pod(value);
  out.pod(request.weights).fields(request.mode, request.direct_below);
  for (const auto* list : {&request.inputs, &request.outputs}) {
    out.pod(static_cast<std::uint32_t>(list->size()));
    for (const graph::NamedBuffer& b : *list) out.string(b.name).pod(b.buffer).pod(b.first);
  }
}

Result<graph::Execute> Operation<graph::Execute>::decode(ByteReader& in) {
  graph::Execute run;
  std::span<const std::byte> encoded;
  std::uint32_t symbols = 0;
  in.bytes(encoded).pod(symbols);
  if (symbols > in.remaining() / sizeof(std::int64_t)) in.fail();
  for (std::uint32_t i = 0; in.ok() && i < symbols; ++i) {
    std::string symbol;
    std::int64_t value = 0;
    in.string(symbol).pod(value);
    run.symbols.emplace(std::move(symbol), value);
  }
  in.pod(run.weights).fields(run.mode, run.direct_below);
  for (auto* list : {&run.inputs, &run.outputs}) {
    std::uint32_t count = 0;
    in.pod(count);
    if (count > in.remaining() / (sizeof(BufferHandle) + sizeof(std::uint64_t))) in.fail();
    for (std::uint32_t i = 0; in.ok() && i < count; ++i) {
      graph::NamedBuffer b;
      in.string(b.name).pod(b.buffer).pod(b.first);
      list->push_back(std::move(b));
    }
  }
  if (!in.finished()) return internal_error("the staged encoding of a graph::Execute request is damaged");
  // A worker sees the same graph request after request: decoding (a replay through the builder) is done once per
  // encoding.
  static cache::Cache<graph::Graph> decoded({.name = "graph-decodes", .max_entries = 64});
  ACCEL_ASSIGN_OR_RETURN(run.graph, decoded.get(encoded, [&] { return graph::Graph::decode(encoded); }));
  return run;
}

}  // namespace accel

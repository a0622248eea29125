#include "dnn/graph_operation.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cache/cache.hpp"
#include "core/vector_versions.hpp"
#include "dnn/cpu/graph_interpreter.hpp"
#include "dnn/plan_key.hpp"

namespace accel {
namespace dnn {
namespace {

constexpr std::size_t kConvGraphs = 1024;

cache::Cache<Graph>& conv_graphs() {
  static cache::Cache<Graph> graphs(cache::CacheOptions<Graph>{.name = "conv-graphs", .max_entries = kConvGraphs});
  return graphs;
}

template <class Conv>
Result<std::shared_ptr<const Graph>> cached_conv_graph(std::span<const std::byte> key, const Conv& request) {
  return conv_graphs().get(key, [&] { return graph_of(request); });
}

std::string tensor_name(std::uint32_t uid) { return fmt::format("tensor %{}", uid); }

}  // namespace

Result<std::shared_ptr<const Graph>> cached_graph_of(std::span<const std::byte> key, const ConvFwd& request) {
  return cached_conv_graph(key, request);
}
Result<std::shared_ptr<const Graph>> cached_graph_of(std::span<const std::byte> key, const ConvBwdData& request) {
  return cached_conv_graph(key, request);
}
Result<std::shared_ptr<const Graph>> cached_graph_of(std::span<const std::byte> key, const ConvBwdFilter& request) {
  return cached_conv_graph(key, request);
}

Result<CheckedGraph> check_graph(std::vector<std::byte> key, std::shared_ptr<const Graph> graph,
                                 std::span<const TensorBinding> bindings) {
  CheckedGraph checked{.key = std::move(key), .graph = std::move(graph), .bindings = {}};
  const Graph& g = *checked.graph;
  checked.bindings.assign(bindings.begin(), bindings.end());
  for (const TensorBinding& binding : checked.bindings) {
    const TensorDesc* tensor = g.find(binding.uid);
    if (tensor == nullptr || tensor->is_virtual) {
      return invalid_argument(
          fmt::format("RunGraph: uid {} is not a bound (non-virtual) tensor of the graph", binding.uid));
    }
  }
  std::sort(checked.bindings.begin(), checked.bindings.end(),
            [](const TensorBinding& a, const TensorBinding& b) { return a.uid < b.uid; });
  for (std::size_t i = 1; i < checked.bindings.size(); ++i) {
    if (checked.bindings[i].uid == checked.bindings[i - 1].uid) {
      return invalid_argument(fmt::format("RunGraph: tensor %{} is bound twice", checked.bindings[i].uid));
    }
  }
  const std::vector<std::uint32_t> wanted = g.bound_uids();
  if (checked.bindings.size() != wanted.size()) {
    for (std::uint32_t uid : wanted) {
      const bool present = std::any_of(checked.bindings.begin(), checked.bindings.end(),
                                       [&](const TensorBinding& b) { return b.uid == uid; });
      if (!present) return invalid_argument(fmt::format("RunGraph: tensor %{} is not bound to a buffer", uid));
    }
  }
  for (const TensorBinding& out : checked.bindings) {
    if (!g.writes(out.uid)) continue;
    for (const TensorBinding& other : checked.bindings) {
      if (other.uid != out.uid && same_buffer(other.buffer, out.buffer)) {
        return invalid_argument(
            fmt::format("RunGraph: output %{} shares its buffer with tensor %{}", out.uid, other.uid));
      }
    }
  }
  return checked;
}

void GraphOperation::operands(const CheckedGraph& checked, Operands& operands) {
  for (const TensorBinding& binding : checked.bindings) {
    const TensorDesc& tensor = *checked.graph->find(binding.uid);
    operands.typed(binding.buffer, tensor_name(binding.uid),
                   checked.graph->writes(binding.uid) ? Access::write : Access::read, tensor.dtype,
                   storage_extent(tensor));
  }
}

Status GraphOperation::run_cpu(const CheckedGraph& checked, std::span<const BufferView> views) {
  std::vector<std::pair<std::uint32_t, cpu::HostTensor>> memory;
  memory.reserve(views.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    memory.push_back({checked.bindings[i].uid, {views[i].data, views[i].dtype, views[i].count}});
  }
  return cpu::run_graph(*checked.graph, memory);
}

void GraphOperation::describe_cpu(LibraryReport& report) {
  report.report(
      LibraryVersion{.name = "accel CPU reference",
                     .version = std::string("built in, ") + detail::name_of(detail::cpu_vector_level()) + " vectors"});
}

template <class Conv>
Result<CheckedGraph> ConvOperation<Conv>::validate(const Conv& request) {
  std::vector<std::byte> key = plan_key(request);
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> graph, cached_graph_of(key, request));
  return check_graph(std::move(key), std::move(graph), bindings_of(request));
}

template struct ConvOperation<ConvFwd>;
template struct ConvOperation<ConvBwdData>;
template struct ConvOperation<ConvBwdFilter>;

}  // namespace dnn

Result<dnn::CheckedGraph> Operation<RunGraph>::validate(const RunGraph& request) {
  if (request.graph == nullptr) return invalid_argument("RunGraph without a graph");
  return dnn::check_graph(dnn::plan_key(*request.graph), request.graph, request.bindings);
}

void Operation<RunGraph>::encode(ByteWriter& out, const RunGraph& request) {
  out.pods(request.bindings).bytes(request.graph->signature().bytes);
}

Result<RunGraph> Operation<RunGraph>::decode(ByteReader& in) {
  RunGraph run;
  std::span<const std::byte> graph;
  if (!in.pods(run.bindings).bytes(graph).finished())
    return internal_error("the staged encoding of a RunGraph request is damaged");
  ACCEL_ASSIGN_OR_RETURN(run.graph, dnn::Graph::decode(graph));
  return run;
}

}  // namespace accel

// The operation contract of the cuDNN family (Note [The operation contract] in operation/operation.hpp):
// RunGraph runs a built graph; ConvFwd, ConvBwdData and ConvBwdFilter are plain-data requests whose graph is made
// from their shape (graph_of) once per shape and kept (a process-wide LRU, like a signature it depends on the
// shape alone). Every one is checked the same way: the bindings against the graph's bound tensors, before a
// buffer is resolved. CPU: the double-precision reference interpreter. CUDA: cudnn_operation.hpp.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "accel/core/byte_codec.hpp"
#include "accel/dnn/convolution.hpp"
#include "accel/dnn/graph.hpp"
#include "operation/operation.hpp"

namespace accel {

namespace dnn {

// A graph request, checked: its plan key, its graph and its bindings, one per bound tensor, in uid order.
struct CheckedGraph {
  std::vector<std::byte> key;
  std::shared_ptr<const Graph> graph;
  std::vector<TensorBinding> bindings;
};

// Refused: a binding of a uid that is not a bound (non-virtual) tensor of the graph, a tensor bound twice or not
// at all, an output bound to the same buffer as another tensor.
[[nodiscard]] Result<CheckedGraph> check_graph(std::vector<std::byte> key, std::shared_ptr<const Graph> graph,
                                               std::span<const TensorBinding> bindings);

// The graph of a convolution request, made once per shape.
[[nodiscard]] Result<std::shared_ptr<const Graph>> cached_graph_of(std::span<const std::byte> key,
                                                                   const ConvFwd& request);
[[nodiscard]] Result<std::shared_ptr<const Graph>> cached_graph_of(std::span<const std::byte> key,
                                                                   const ConvBwdData& request);
[[nodiscard]] Result<std::shared_ptr<const Graph>> cached_graph_of(std::span<const std::byte> key,
                                                                   const ConvBwdFilter& request);

// The part of the contract every graph request shares.
struct GraphOperation {
  using Checked = CheckedGraph;
  // One operand per binding, in the checked order: the tensor's dtype and storage extent, written if an output.
  static void operands(const CheckedGraph& checked, Operands& operands);
  static Status run_cpu(const CheckedGraph& checked, std::span<const BufferView> views);
  static void describe_cpu(LibraryReport& report);
};

template <class Conv>
struct ConvOperation : GraphOperation {
  static Result<CheckedGraph> validate(const Conv& request);
  static void operands(const Conv&, const CheckedGraph& checked, Operands& list) {
    GraphOperation::operands(checked, list);
  }
  static Status run_cpu(const Conv&, const CheckedGraph& checked, std::span<const BufferView> views, const CpuTarget&) {
    return GraphOperation::run_cpu(checked, views);
  }
};

}  // namespace dnn

template <>
struct Operation<ConvFwd> : dnn::ConvOperation<ConvFwd> {};
template <>
struct Operation<ConvBwdData> : dnn::ConvOperation<ConvBwdData> {};
template <>
struct Operation<ConvBwdFilter> : dnn::ConvOperation<ConvBwdFilter> {};

template <>
struct Operation<RunGraph> : dnn::GraphOperation {
  static Result<dnn::CheckedGraph> validate(const RunGraph& request);
  static void operands(const RunGraph&, const dnn::CheckedGraph& checked, Operands& list) {
    GraphOperation::operands(checked, list);
  }
  static Status run_cpu(const RunGraph&, const dnn::CheckedGraph& checked, std::span<const BufferView> views,
                        const CpuTarget&) {
    return GraphOperation::run_cpu(checked, views);
  }
  // RunGraph is not plain data: it crosses to an isolated worker as its bindings and its graph's encoding, and
  // the worker decodes and validates the graph again.
  static void encode(ByteWriter& out, const RunGraph& request);
  static Result<RunGraph> decode(ByteReader& in);
};

}  // namespace accel

#include "dnn/cpu/graph_interpreter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "dnn/cpu/kernels.hpp"
#include "dnn/cpu/tensor_storage.hpp"
#include "dnn/node_rules.hpp"

namespace accel::dnn::cpu {
namespace {

const DenseTensor* pointer_to(const std::optional<DenseTensor>& t) { return t ? &*t : nullptr; }

class Interpreter {
 public:
  explicit Interpreter(const Graph& graph) : graph_(graph) {}

  Status bind(std::span<const std::pair<std::uint32_t, HostTensor>> bound) {
    for (const auto& [uid, memory] : bound) {
      const TensorDesc* tensor = graph_.find(uid);
      if (tensor == nullptr)
        return invalid_argument(fmt::format("uid {} is bound but is not a tensor of the graph", uid));
      if (tensor->is_virtual)
        return invalid_argument(fmt::format("tensor {} is virtual: it has no memory to bind", uid));
      if (memory.dtype != tensor->dtype) {
        return invalid_argument(fmt::format("tensor {} is {} but its memory holds {}", uid, to_string(tensor->dtype),
                                            to_string(memory.dtype)));
      }
      if (memory.data == nullptr) return invalid_argument(fmt::format("tensor {} is bound to null memory", uid));
      if (memory.count < storage_extent(*tensor)) {
        return invalid_argument(
            fmt::format("tensor {} needs memory for {} elements, got {}", uid, storage_extent(*tensor), memory.count));
      }
      if (!memory_.emplace(uid, memory).second) return invalid_argument(fmt::format("tensor {} is bound twice", uid));
    }
    for (const TensorDesc& tensor : graph_.tensors()) {
      if (!tensor.is_virtual && !memory_.contains(tensor.uid)) {
        return invalid_argument(fmt::format("tensor {} is not bound", tensor.uid));
      }
    }
    for (const Node& node : graph_.nodes()) {
      for (std::uint32_t uid : tensors_of(node).outputs) {
        const TensorDesc* tensor = graph_.find(uid);
        if (tensor != nullptr && !tensor->is_virtual && !can_store(tensor->dtype)) {
          return not_supported(
              fmt::format("tensor {}: the CPU reference stores {} results in floating types only, "
                          "not {}",
                          uid, node_name(node), to_string(tensor->dtype)));
        }
      }
    }
    return Status();
  }

  Status run() {
    const std::vector<Node>& nodes = graph_.nodes();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      Status status = std::visit([&](const auto& node) { return execute(node); }, nodes[i]);
      if (!status.ok()) return status.with_context(fmt::format("node {} ({})", i, node_name(nodes[i])));
    }
    return Status();
  }

 private:
  Result<const TensorDesc*> describe(std::uint32_t uid) const {
    const TensorDesc* tensor = graph_.find(uid);
    if (tensor == nullptr) return invalid_argument(fmt::format("uid {} is not a tensor of the graph", uid));
    return tensor;
  }

  Result<DenseTensor> fetch(std::uint32_t uid) const {
    ACCEL_ASSIGN_OR_RETURN(const TensorDesc* tensor, describe(uid));
    if (!tensor->is_virtual) return load(*tensor, memory_.at(uid).data);
    auto it = virtuals_.find(uid);
    if (it == virtuals_.end())
      return invalid_argument(fmt::format("virtual tensor {} is read before it is written", uid));
    return it->second;
  }

  // Inputs a node may leave out (uid 0).
  Result<std::optional<DenseTensor>> fetch_if_present(std::uint32_t uid) const {
    if (uid == 0) return std::optional<DenseTensor>();
    ACCEL_ASSIGN_OR_RETURN(DenseTensor tensor, fetch(uid));
    return std::optional<DenseTensor>(std::move(tensor));
  }

  Result<std::vector<std::int64_t>> dims_of(std::uint32_t uid) const {
    ACCEL_ASSIGN_OR_RETURN(const TensorDesc* tensor, describe(uid));
    return std::vector<std::int64_t>(tensor->shape().begin(), tensor->shape().end());
  }

  Status deliver(std::uint32_t uid, DenseTensor result) {
    ACCEL_ASSIGN_OR_RETURN(const TensorDesc* tensor, describe(uid));
    if (!std::ranges::equal(result.dims, tensor->shape())) {
      return invalid_argument(fmt::format("tensor {} has dims [{}] but its op computes [{}]", uid,
                                          fmt::join(tensor->shape(), ", "), fmt::join(result.dims, ", ")));
    }
    if (tensor->is_virtual) {
      virtuals_[uid] = std::move(result);
    } else {
      store(*tensor, result.values, memory_.at(uid).data);
    }
    return Status();
  }

  // Statistics outputs are delivered only where the node names a tensor for them.
  Status deliver_if_present(std::uint32_t uid, DenseTensor result) {
    return uid == 0 ? Status() : deliver(uid, std::move(result));
  }

  Status execute(const ConvolutionNode& node) {
    ACCEL_ASSIGN_OR_RETURN(DenseTensor a, fetch(node.a));
    ACCEL_ASSIGN_OR_RETURN(DenseTensor b, fetch(node.b));
    ACCEL_ASSIGN_OR_RETURN(std::vector<std::int64_t> out_dims, dims_of(node.out));
    ACCEL_ASSIGN_OR_RETURN(DenseTensor out, convolution(node, a, b, out_dims));
    return deliver(node.out, std::move(out));
  }

  Status execute(const PointwiseNode& node) {
    ACCEL_ASSIGN_OR_RETURN(DenseTensor a, fetch(node.a));
    ACCEL_ASSIGN_OR_RETURN(std::optional<DenseTensor> b, fetch_if_present(node.b));
    ACCEL_ASSIGN_OR_RETURN(std::vector<std::int64_t> out_dims, dims_of(node.out));
    ACCEL_ASSIGN_OR_RETURN(DenseTensor out, pointwise(node, a, pointer_to(b), out_dims));
    return deliver(node.out, std::move(out));
  }

  Status execute(const MatmulNode& node) {
    ACCEL_ASSIGN_OR_RETURN(DenseTensor a, fetch(node.a));
    ACCEL_ASSIGN_OR_RETURN(DenseTensor b, fetch(node.b));
    ACCEL_ASSIGN_OR_RETURN(std::vector<std::int64_t> out_dims, dims_of(node.out));
    ACCEL_ASSIGN_OR_RETURN(DenseTensor out, matmul(a, b, out_dims));
    return deliver(node.out, std::move(out));
  }

  Status execute(const BatchNormNode& node) {
    ACCEL_ASSIGN_OR_RETURN(DenseTensor x, fetch(node.x));
    ACCEL_ASSIGN_OR_RETURN(DenseTensor scale, fetch(node.scale));
    ACCEL_ASSIGN_OR_RETURN(std::optional<DenseTensor> bias, fetch_if_present(node.bias));
    std::optional<DenseTensor> mean, inv_variance;
    if (!node.training) {
      ACCEL_ASSIGN_OR_RETURN(mean, fetch(node.mean));
      ACCEL_ASSIGN_OR_RETURN(inv_variance, fetch(node.inv_variance));
    }
    ACCEL_ASSIGN_OR_RETURN(NormalizedTensors out, batch_norm(node, {.x = x,
                                                                    .scale = scale,
                                                                    .bias = pointer_to(bias),
                                                                    .mean = pointer_to(mean),
                                                                    .inv_variance = pointer_to(inv_variance)}));
    ACCEL_RETURN_IF_ERROR(deliver(node.y, std::move(out.y)));
    if (!node.training) return Status();
    ACCEL_RETURN_IF_ERROR(deliver_if_present(node.mean, std::move(out.mean)));
    return deliver_if_present(node.inv_variance, std::move(out.inv_variance));
  }

  Status execute(const NormNode& node) {
    if (node.kind == NormKind::rms && node.mean != 0) {
      return invalid_argument(fmt::format("RMS norm has no mean to write to tensor {}", node.mean));
    }
    ACCEL_ASSIGN_OR_RETURN(DenseTensor x, fetch(node.x));
    ACCEL_ASSIGN_OR_RETURN(DenseTensor scale, fetch(node.scale));
    ACCEL_ASSIGN_OR_RETURN(std::optional<DenseTensor> bias, fetch_if_present(node.bias));
    ACCEL_ASSIGN_OR_RETURN(NormalizedTensors out, norm(node, {.x = x, .scale = scale, .bias = pointer_to(bias)}));
    ACCEL_RETURN_IF_ERROR(deliver(node.y, std::move(out.y)));
    ACCEL_RETURN_IF_ERROR(deliver_if_present(node.mean, std::move(out.mean)));
    return deliver_if_present(node.inv_variance, std::move(out.inv_variance));
  }

  Status execute(const ReductionNode& node) {
    ACCEL_ASSIGN_OR_RETURN(DenseTensor x, fetch(node.x));
    ACCEL_ASSIGN_OR_RETURN(std::vector<std::int64_t> out_dims, dims_of(node.out));
    ACCEL_ASSIGN_OR_RETURN(DenseTensor out, reduction(node, x, out_dims));
    return deliver(node.out, std::move(out));
  }

  // Dense tensors are row-major over the logical dims, which is exactly the order a reshape keeps.
  Status execute(const ReshapeNode& node) {
    ACCEL_ASSIGN_OR_RETURN(DenseTensor x, fetch(node.x));
    ACCEL_ASSIGN_OR_RETURN(std::vector<std::int64_t> out_dims, dims_of(node.out));
    if (volume(out_dims) != volume(x.dims)) {
      return invalid_argument(
          fmt::format("reshape: {} elements cannot take dims [{}]", volume(x.dims), fmt::join(out_dims, ", ")));
    }
    return deliver(node.out, {.dims = std::move(out_dims), .values = std::move(x.values)});
  }

  Status execute(const PoolingNode& node) {
    ACCEL_ASSIGN_OR_RETURN(DenseTensor x, fetch(node.x));
    ACCEL_ASSIGN_OR_RETURN(std::vector<std::int64_t> out_dims, dims_of(node.out));
    ACCEL_ASSIGN_OR_RETURN(DenseTensor out, pooling(node, x, out_dims));
    return deliver(node.out, std::move(out));
  }

  Status execute(const AttentionNode& node) {
    ACCEL_ASSIGN_OR_RETURN(DenseTensor q, fetch(node.q));
    ACCEL_ASSIGN_OR_RETURN(DenseTensor k, fetch(node.k));
    ACCEL_ASSIGN_OR_RETURN(DenseTensor v, fetch(node.v));
    ACCEL_ASSIGN_OR_RETURN(std::optional<DenseTensor> seq_len_q, fetch_if_present(node.seq_len_q));
    ACCEL_ASSIGN_OR_RETURN(std::optional<DenseTensor> seq_len_kv, fetch_if_present(node.seq_len_kv));
    ACCEL_ASSIGN_OR_RETURN(
        AttentionResult out,
        attention(node,
                  {.q = q, .k = k, .v = v, .seq_len_q = pointer_to(seq_len_q), .seq_len_kv = pointer_to(seq_len_kv)}));
    ACCEL_RETURN_IF_ERROR(deliver(node.o, std::move(out.o)));
    return deliver_if_present(node.stats, std::move(out.stats));
  }

  const Graph& graph_;
  std::unordered_map<std::uint32_t, HostTensor> memory_;
  std::unordered_map<std::uint32_t, DenseTensor> virtuals_;
};

}  // namespace

Status run_graph(const Graph& graph, std::span<const std::pair<std::uint32_t, HostTensor>> bound) {
  Interpreter interpreter(graph);
  ACCEL_RETURN_IF_ERROR(interpreter.bind(bound));
  return interpreter.run();
}

}  // namespace accel::dnn::cpu

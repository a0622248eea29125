// The CUDA lowering of an executable's steps: matmuls through the stream's cuBLASLt (bias, ReLU and tanh-GELU fused
// in its epilogue; other activations by one bias + activation pass after it), everything else the graph kernels.
// Called once per capture at the bucket's extent, or per run at the actual extent.
#include <fmt/format.h>

#include "graph/cuda/cuda_executable.hpp"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::graph::cuda {

namespace {

struct Frame {
  const ExecutablePlan& plan;
  const SymbolValues& extent;
  std::byte* arena;
  const std::byte* weights;
  cudaStream_t stream;

  [[nodiscard]] const TensorInfo& info(std::uint32_t t) const { return plan.graph().tensors()[t]; }
  [[nodiscard]] std::int64_t dim(std::uint32_t t, std::size_t i) const { return evaluate(info(t).shape[i], extent); }
  [[nodiscard]] std::int64_t count(std::uint32_t t) const {
    return static_cast<std::int64_t>(element_count(info(t).shape, extent));
  }
  [[nodiscard]] std::int64_t last_dim(std::uint32_t t) const { return dim(t, info(t).shape.size() - 1); }
  [[nodiscard]] std::int64_t rows(std::uint32_t t) const {
    const std::int64_t w = last_dim(t);
    return w == 0 ? 0 : count(t) / w;
  }
  template <class T = void>
  [[nodiscard]] T* at(std::uint32_t t) const {
    if (t == Node::kNone) return nullptr;
    const Slot& s = plan.slot(t);
    std::byte* base = s.storage == Storage::weights ? const_cast<std::byte*>(weights) : arena;
    return reinterpret_cast<T*>(base + s.offset);
  }
};

StridedLayout layout_of(const Frame& f, std::uint32_t t) {
  StridedLayout layout;
  const auto rank = f.info(t).shape.size();
  layout.rank = static_cast<int>(rank);
  std::int64_t stride = 1;
  for (std::size_t i = rank; i-- > 0;) {
    layout.shape[i] = f.dim(t, i);
    layout.strides[i] = stride;
    stride *= layout.shape[i];
  }
  return layout;
}

Status matmul(const Frame& f, const Node& node, blas::CublasLtGemm& gemm, CudaTarget& target) {
  const std::uint32_t x = node.inputs[0], w = node.inputs[1], bias = node.inputs[2];
  const std::int64_t rows = f.dim(x, 0), k = f.dim(x, 1), n = f.dim(node.output, 1);
  if (rows == 0 || n == 0) return Status();
  const DType dtype = f.info(x).dtype;
  const bool fused = node.activation == Activation::identity || node.activation == Activation::relu ||
                     node.activation == Activation::gelu_tanh;
  Epilogue epilogue{.activation = fused ? node.activation : Activation::identity,
                    .bias = bias != Node::kNone ? BiasVector::per_column : BiasVector::none};
  GemmShape shape{.transpose_b = node.transpose_b ? Transpose::transpose : Transpose::none,
                  .m = rows,
                  .n = n,
                  .k = k,
                  .input_type = dtype,
                  .output_type = dtype,
                  .epilogue = epilogue};
  ACCEL_ASSIGN_OR_RETURN(GemmGeometry geometry, plan_gemm_geometry(shape));
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const blas::CublasLtGemm::Plan> plan, gemm.plan(geometry));
  ACCEL_RETURN_IF_ERROR(gemm.run(
      *plan, geometry, {.a = f.at(x), .b = f.at(w), .c = f.at(node.output), .bias = f.at(bias)}, 1.0, 0.0, f.stream));
  if (fused) return Status();
  return target.check(
      bias_activation(dtype, f.at(node.output), nullptr, rows, n, node.activation, f.at(node.output), f.stream),
      "launching bias_activation");
}

cudaError_t launch(const Frame& f, const Node& node) {
  const std::uint32_t out = node.output;
  const auto& in = node.inputs;
  const DType dtype = f.info(out).dtype;
  switch (node.kind) {
    case OpKind::gather:
      return gather_rows(dtype, f.at(in[0]), f.dim(in[0], 0), f.dim(in[0], 1), f.at<std::int32_t>(in[1]),
                         f.dim(in[1], 0), f.at(out), f.stream);
    case OpKind::sequence_positions:
      return sequence_positions(f.at<std::int32_t>(in[0]), f.dim(in[0], 0) - 1, f.dim(out, 0), f.at<std::int32_t>(out),
                                f.stream);
    case OpKind::unary: return unary(dtype, node.activation, f.at(in[0]), f.at(out), f.count(out), f.stream);
    case OpKind::binary:
      return binary(dtype, node.binary, f.at(in[0]), f.at(in[1]),
                    f.info(in[1]).shape != f.info(in[0]).shape ? Broadcast::row : Broadcast::none, f.rows(out),
                    f.last_dim(out), f.at(out), f.stream);
    case OpKind::layer_norm:
      return layer_norm(dtype, f.at(in[0]), f.at(in[3]), f.at(in[1]), f.at(in[2]), f.rows(out), f.last_dim(out),
                        node.eps, f.at(out), nullptr, f.stream);
    case OpKind::rms_norm:
      return rms_norm(dtype, f.at(in[0]), f.at(in[2]), f.at(in[1]), f.rows(out), f.last_dim(out), node.eps, f.at(out),
                      nullptr, f.stream);
    case OpKind::attention: {
      const std::int64_t width = f.dim(in[0], 1);
      return packed_attention(dtype, f.at(in[0]), width, f.at(in[1]), width, f.at(in[2]), width,
                              f.at<std::int32_t>(in[3]), f.dim(in[3], 0) - 1, node.max_length, node.heads,
                              static_cast<int>(width / node.heads), node.scale, f.at(out), width, f.stream);
    }
    case OpKind::mean_pool:
      return mean_pool(dtype, f.at(in[0]), f.dim(in[0], 1), f.at<std::int32_t>(in[1]), f.dim(in[1], 0) - 1, f.at(out),
                       f.stream);
    case OpKind::l2_normalize:
      return l2_normalize(dtype, f.at(in[0]), f.rows(out), f.last_dim(out), node.eps, f.at(out), f.stream);
    case OpKind::transpose: {
      const StridedLayout source = layout_of(f, in[0]);
      StridedLayout layout{.rank = source.rank};
      for (int i = 0; i < source.rank; ++i) {
        layout.shape[i] = source.shape[node.permutation[static_cast<std::size_t>(i)]];
        layout.strides[i] = source.strides[node.permutation[static_cast<std::size_t>(i)]];
      }
      return strided_copy(dtype, f.at(in[0]), layout, f.at(out), f.stream);
    }
    case OpKind::slice: {
      StridedLayout layout = layout_of(f, in[0]);
      const auto axis = static_cast<std::size_t>(node.axis);
      layout.shape[axis] = node.end - node.begin;
      return strided_copy(dtype, f.at<std::byte>(in[0]) + node.begin * layout.strides[axis] * size_of(dtype), layout,
                          f.at(out), f.stream);
    }
    case OpKind::cast: return cuda::cast(f.info(in[0]).dtype, f.at(in[0]), dtype, f.at(out), f.count(out), f.stream);
    default: return cudaSuccess;
  }
}

}  // namespace

Status enqueue_steps(const ExecutablePlan& plan, const SymbolValues& extent, std::byte* arena, const std::byte* weights,
                     blas::CublasLtGemm& gemm, CudaTarget& target) {
  const Frame frame{.plan = plan, .extent = extent, .arena = arena, .weights = weights, .stream = target.stream()};
  for (std::uint32_t index : plan.steps()) {
    const Node& node = plan.graph().nodes()[index];
    if (node.kind == OpKind::matmul) {
      ACCEL_RETURN_IF_ERROR(launch_status(target, matmul(frame, node, gemm, target), "cuBLASLt"));
      continue;
    }
    if (frame.count(node.output) == 0) continue;
    ACCEL_RETURN_IF_ERROR(target.check(launch(frame, node), fmt::format("launching {}", to_string(node.kind))));
  }
  return Status();
}

}  // namespace accel::graph::cuda

// The CUDA lowering of an executable's steps: matmuls of a query's few rows (at most 64) whose weights stay in the L2
// cache, or are few (takes_few_rows), through the graph kernels' chained few-rows matmul (with the gated op after a
// gate|up product in the same kernel), the others through the stream's
// cuBLASLt (bias, ReLU, tanh-GELU and a residual fused in its epilogue; other activations by one bias + activation pass
// after it) or, while cuBLASLt starts, through the graph kernels' own matmul (every epilogue fused); everything else
// the graph kernels. Called once per capture at the bucket's extent, or per run at the actual extent.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "graph/cuda/cuda_executable.hpp"
#include "graph/kernels/cuda_gated_matmul.hpp"
#include "graph/kernels/cuda_kernels.hpp"
#include "graph/step_frame.hpp"

namespace accel::graph::cuda {

namespace {

// The CUDA frame: untyped device addresses, and the stream the steps go on.
struct Frame : StepFrame {
  cudaStream_t stream;
  template <class T = void>
  [[nodiscard]] T* at(std::uint32_t t) const {
    return StepFrame::at<T>(t);
  }
  // Whether every tensor given (absent ones aside) is a parameter in the weights buffer, which no kernel writes: a
  // kernel may then read it before waiting for the kernel before (chained_launch.cuh). An input is copied in by a
  // kernel of the graph, and any other tensor is some op's output.
  template <class... Tensors>
  [[nodiscard]] bool parameters(Tensors... tensors) const {
    return ((tensors == Node::kNone || plan.slot(tensors).storage == Storage::weights) && ...);
  }
};

// Whether the plan's products' weights together fit in half the GPU's L2 cache, so that they stay there between queries
// and the few-rows kernels' blocks (one per 8 or 16 columns, each reading every row of A) read them from L2.
bool products_stay_in_l2(const Frame& f) {
  std::uint64_t bytes = 0;
  for (std::uint32_t index : f.plan.steps()) {
    const Node& node = f.plan.graph().nodes()[index];
    if (node.kind == OpKind::matmul)
      bytes += static_cast<std::uint64_t>(f.count(node.inputs[1])) * size_of(f.info(node.inputs[1]).dtype);
  }
  int device = 0, l2_bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device) != cudaSuccess)
    return false;
  return bytes <= static_cast<std::uint64_t>(l2_bytes) / 2;
}

// Where a model's weights come from DRAM (not products_stay_in_l2), a product takes the few-rows kernels only at one
// 16-row tile and with at most this many bytes of weights. On the H200 (docs/PERFORMANCE.md §81): a query of 16 rows
// ran 0.85x with them for a 12 x 768 encoder and 0.78x for ModernBERT-base (every product 1.2-4.7 MB); Qwen3-0.6B's
// ran 0.98x with its 4.2 MB attention output on them, 1.07x with its 6.3 MB down product as well, 1.3-1.4x with all
// (8.4-12.6 MB). At 32 and 64 rows each block's reads of A made the wide products 1.2-1.8x cuBLASLt's
// (few_rows_matmul_bench), where §65 had measured a 12 x 768 encoder's 64-row query 1.15x.
constexpr std::int64_t kFewRowsFromDram = 16;
constexpr std::uint64_t kMostWeightsFromDram = 5 << 20;

// Whether a product of few rows takes the few-rows kernels: its weight and bias are graph parameters (read before the
// kernel before ends), and its weights stay in L2 (products_stay_in_l2, asked once a run: `products_in_l2`) or are
// few enough to read from DRAM at these rows.
bool takes_few_rows(const Frame& f, const Node& matmul, std::optional<bool>& products_in_l2) {
  const std::uint32_t w = matmul.inputs[1];
  if (!matmul.transpose_b || !f.parameters(w, matmul.inputs[2])) return false;
  if (!products_in_l2) products_in_l2 = products_stay_in_l2(f);
  if (*products_in_l2) return true;
  const std::uint64_t weight_bytes = static_cast<std::uint64_t>(f.count(w)) * size_of(f.info(w).dtype);
  return f.dim(matmul.inputs[0], 0) <= kFewRowsFromDram && weight_bytes <= kMostWeightsFromDram;
}

Status matmul(const Frame& f, const Node& node, std::optional<bool>& products_in_l2, blas::CublasLtGemm* gemm,
              CudaTarget& target) {
  const std::uint32_t x = node.inputs[0], w = node.inputs[1], bias = node.inputs[2];
  const std::uint32_t residual = node.inputs.size() > 3 ? node.inputs[3] : Node::kNone;
  const std::int64_t rows = f.dim(x, 0), k = f.dim(x, 1), n = f.dim(node.output, 1);
  if (rows == 0 || n == 0) return Status();
  const DType dtype = f.info(x).dtype;
  if (few_rows_matmul_fits(dtype, rows, n, k, f.at(x), f.at(w)) && takes_few_rows(f, node, products_in_l2)) {
    return target.check(few_rows_matmul(dtype, f.at(x), f.at(w), f.at(bias), node.activation, f.at(residual), rows, n,
                                        k, f.at(node.output), f.stream),
                        "launching the few-rows matmul");
  }
  if (gemm == nullptr) {
    ACCEL_RETURN_IF_ERROR(
        target.check(cuda::matmul(dtype, f.at(x), f.at(w), node.transpose_b, bias != Node::kNone ? f.at(bias) : nullptr,
                                  node.activation, rows, n, k, f.at(node.output), f.stream),
                     "launching the graph's own matmul"));
    if (residual == Node::kNone) return Status();
    return target.check(binary(dtype, BinaryOp::add, f.at(node.output), f.at(residual), Broadcast::none, rows, n,
                               f.at(node.output), f.stream),
                        "launching the residual's add");
  }
  // Exact GELU runs as cuBLASLt's tanh-form GELU epilogue in f16/bf16, as text-embeddings-inference runs it: the
  // two differ by at most 4.7e-4 (at x = -2.7), and the separate pass over the [tokens, inner] product it saves was
  // 17-19 % of an encoder's GPU time (docs/PERFORMANCE.md §39). f32 keeps erf, as the CPU device computes it.
  const bool half_precision = dtype == DType::f16 || dtype == DType::bf16;
  const Activation activation =
      node.activation == Activation::gelu_erf && half_precision ? Activation::gelu_tanh : node.activation;
  const bool fused =
      activation == Activation::identity || activation == Activation::relu || activation == Activation::gelu_tanh;
  Epilogue epilogue{.activation = fused ? activation : Activation::identity,
                    .bias = bias != Node::kNone ? BiasVector::per_column : BiasVector::none};
  GemmShape shape{.transpose_b = node.transpose_b ? Transpose::transpose : Transpose::none,
                  .m = rows,
                  .n = n,
                  .k = k,
                  .input_type = dtype,
                  .output_type = dtype,
                  .epilogue = epilogue};
  ACCEL_ASSIGN_OR_RETURN(GemmGeometry geometry, plan_gemm_geometry(shape));
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const blas::CublasLtGemm::Plan> plan, gemm->plan(geometry));
  // A residual is cuBLASLt's C beside the output D (beta = 1): added in the epilogue, after the identity activation
  // the builder requires with it.
  ACCEL_RETURN_IF_ERROR(
      gemm->run(*plan, geometry,
                {.a = f.at(x), .b = f.at(w), .c = f.at(node.output), .bias = f.at(bias), .addend = f.at(residual)}, 1.0,
                residual != Node::kNone ? 1.0 : 0.0, f.stream, blas::CublasLtGemm::Timing::first_run));
  if (fused) return Status();
  return target.check(
      bias_activation(dtype, f.at(node.output), nullptr, rows, n, node.activation, f.at(node.output), f.stream),
      "launching bias_activation");
}

// Whether `reader` is the only node that reads `tensor` (a reshape, which runs no step, counts as a reader) and
// `tensor` is not an output of the graph: what a fusion that never writes `tensor` needs.
bool read_only_by(const Frame& f, std::uint32_t tensor, const Node& reader) {
  for (const Graph::Output& output : f.plan.graph().outputs())
    if (output.tensor == tensor) return false;
  for (const Node& node : f.plan.graph().nodes())
    if (&node != &reader && std::find(node.inputs.begin(), node.inputs.end(), tensor) != node.inputs.end())
      return false;
  return true;
}

// The fewest rows for which the fused gated product runs: below, its 128-row tiles leave SMs idle against cuBLASLt's
// product and the gate pass (gated_matmul_bench on the H200, docs/PERFORMANCE.md §73: at 1,024 rows 0.78-0.92x in the
// first sweep; at 2,048 rows 1.03-1.07x for Qwen3-0.6B's MLP and 1.23-1.24x for a 12 x 768 GELU MLP; at 16,384
// 1.12-1.18x / 1.38-1.41x).
constexpr std::int64_t kFusedGateRows = 2048;

// Whether `next` is a gated op over `matmul`'s product in groups of 8, with nothing in the product's epilogue but a
// bias: what a kernel computing the two at once takes.
bool gates_product(const Node& matmul, const Node& next) {
  return next.kind == OpKind::gated && next.gate_layout == GateLayout::groups_of_8 && next.inputs[0] == matmul.output &&
         matmul.transpose_b && matmul.inputs.size() <= 3 && matmul.activation == Activation::identity;
}

// Whether `matmul` and the gated op after it run as one product (gated_matmul: sm_90, f16/bf16, the gate layout
// it writes from its accumulators, nothing else in the matmul's epilogue), which never writes the matmul's output:
// so no other node may read it (a reshape, which runs no step, included), and it may not be an output of the graph.
// It reads x while its epilogue writes the gated output; the memory plan keeps the two apart (reads_matmul_inputs).
bool fuses_with_gate(const Frame& f, const Node& matmul, const Node& next) {
  if (!gates_product(matmul, next) || matmul.inputs[2] != Node::kNone) return false;
  const std::uint32_t x = matmul.inputs[0], w = matmul.inputs[1];
  const std::int64_t rows = f.dim(x, 0), k = f.dim(x, 1), width = f.dim(next.output, 1);
  if (rows < kFusedGateRows || !gated_matmul_runs_here() ||
      !gated_matmul_fits(f.info(x).dtype, next.activation, rows, width, k, f.at(x), f.at(w), f.at(next.output)))
    return false;
  return read_only_by(f, matmul.output, next);
}

// Whether a query's `matmul` and the gated op after it run as the few-rows kernel's gated form (few_rows_gated_matmul),
// which never writes the product (see fuses_with_gate). A gated op after its product was a pass of its own, one of a
// ModernBERT-base layer's eight kernels in a query's chain.
bool gates_in_few_rows(const Frame& f, const Node& matmul, const Node& next, std::optional<bool>& products_in_l2) {
  if (!gates_product(matmul, next)) return false;
  const std::uint32_t x = matmul.inputs[0], w = matmul.inputs[1];
  if (!few_rows_gated_matmul_fits(f.info(x).dtype, f.dim(x, 0), f.dim(matmul.output, 1), f.dim(x, 1), f.at(x),
                                  f.at(w)) ||
      !takes_few_rows(f, matmul, products_in_l2))
    return false;
  return read_only_by(f, matmul.output, next);
}

// Whether `rope` may be left to the attention after it (packed_attention's `rotary`): a packed q|k|v rope written
// over its input, so that the attention finds the unrotated q and k where it would have read the rotated ones and
// nothing else sees the difference: no other node reads the rope's output, which is not an output of the graph.
// Not a rope with head norms (Qwen3's): with the norms in the kernel, a Qwen3-0.6B query ran 1.095x slower than with
// the rope's own pass, where ModernBERT-base's ran 0.95x (docs/PERFORMANCE.md §75).
bool rotates_in_attention(const Frame& f, const Node& rope, const Node& next) {
  if (next.kind != OpKind::attention || !next.packs_qkv() || next.inputs[0] != rope.output || rope.kv_heads <= 0 ||
      rope.inputs[2] != Node::kNone || rope.heads != next.heads || rope.kv_heads != next.kv_heads ||
      f.at(rope.output) != f.at(rope.inputs[0]))
    return false;
  return read_only_by(f, rope.output, next);
}

cudaError_t launch_attention(const Frame& f, const Node& node, const AttentionRotary* rotary = nullptr) {
  const AttentionOperands a = attention_operands(f, node);
  const DType dtype = f.info(node.output).dtype;
  const std::size_t element = size_of(dtype);
  return packed_attention(dtype, f.at(a.q), a.q_stride, f.at<std::byte>(a.k) + a.k_first * element, a.kv_stride,
                          f.at<std::byte>(a.v) + a.v_first * element, a.kv_stride, f.at<std::int32_t>(node.inputs[3]),
                          f.dim(node.inputs[3], 0) - 1, f.dim(node.inputs[0], 0), node.max_length, node.heads,
                          static_cast<int>(a.head_dim), node.scale, f.at(node.output), f.dim(node.output, 1), f.stream,
                          node.kv_heads, node.causal, node.window, rotary);
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
                    f.last_dim(out), f.at(out), f.stream, node.activation);
    case OpKind::layer_norm:
      return layer_norm(dtype, f.at(in[0]), f.at(in[3]), f.at(in[1]), f.at(in[2]), f.rows(out), f.last_dim(out),
                        node.eps, f.at(out), nullptr, f.stream, f.parameters(in[1], in[2]));
    case OpKind::rms_norm:
      return rms_norm(dtype, f.at(in[0]), f.at(in[2]), f.at(in[1]), f.rows(out), f.last_dim(out), node.eps, f.at(out),
                      nullptr, f.stream, f.parameters(in[1]));
    case OpKind::attention: return launch_attention(f, node);
    case OpKind::gated: {
      const GatedExtent e = gated_extent(node.gate_layout, f.rows(out), f.last_dim(out));
      return gated(dtype, f.at(in[0]), e.rows, e.width, node.activation, f.at(out), f.stream);
    }
    case OpKind::rope: {
      return rope(dtype, f.at(in[0]), f.at<std::int32_t>(in[1]), f.dim(in[0], 0), node.heads, rope_head_dim(f, node),
                  node.theta, f.at(out), f.stream, node.kv_heads, f.at(in[2]), f.at(in[3]), node.eps);
    }
    case OpKind::pool:
      return pool(node.pool, dtype, f.at(in[0]), f.dim(in[0], 1), f.at<std::int32_t>(in[1]), f.dim(in[1], 0) - 1,
                  f.dim(in[0], 0), f.at(out), f.stream);
    case OpKind::l2_normalize:
      return l2_normalize(dtype, f.at(in[0]), f.rows(out), f.last_dim(out), node.eps, f.at(out), f.stream);
    case OpKind::transpose: return strided_copy(dtype, f.at(in[0]), transpose_layout(f, node), f.at(out), f.stream);
    case OpKind::slice: {
      const SliceSource source = slice_source(f, node);
      return strided_copy(dtype, f.at<std::byte>(in[0]) + source.first * static_cast<std::int64_t>(size_of(dtype)),
                          source.layout, f.at(out), f.stream);
    }
    case OpKind::cast: return cuda::cast(f.info(in[0]).dtype, f.at(in[0]), dtype, f.at(out), f.count(out), f.stream);
    default: return cudaSuccess;
  }
}

}  // namespace

Status enqueue_steps(const ExecutablePlan& plan, const SymbolValues& extent, std::byte* arena, const std::byte* weights,
                     blas::CublasLtGemm* gemm, CudaTarget& target) {
  const Frame frame{{.plan = plan, .extent = extent, .arena = arena, .weights = weights}, target.stream()};
  std::optional<bool> products_in_l2;
  const std::vector<std::uint32_t>& steps = plan.steps();
  for (std::size_t step = 0; step < steps.size(); ++step) {
    const Node& node = plan.graph().nodes()[steps[step]];
    if (node.kind == OpKind::matmul) {
      if (step + 1 < steps.size()) {
        const Node& next = plan.graph().nodes()[steps[step + 1]];
        if (fuses_with_gate(frame, node, next)) {
          const std::uint32_t x = node.inputs[0];
          ACCEL_RETURN_IF_ERROR(target.check(
              gated_matmul(frame.info(x).dtype, next.activation, frame.at(x), frame.at(node.inputs[1]), frame.dim(x, 0),
                           frame.dim(next.output, 1), frame.dim(x, 1), frame.at(next.output), frame.stream),
              "launching the gated matmul"));
          ++step;
          continue;
        }
        if (gates_in_few_rows(frame, node, next, products_in_l2)) {
          const std::uint32_t x = node.inputs[0];
          ACCEL_RETURN_IF_ERROR(target.check(
              few_rows_gated_matmul(frame.info(x).dtype, frame.at(x), frame.at(node.inputs[1]),
                                    frame.at(node.inputs[2]), next.activation, frame.dim(x, 0),
                                    frame.dim(node.output, 1), frame.dim(x, 1), frame.at(next.output), frame.stream),
              "launching the few-rows gated matmul"));
          ++step;
          continue;
        }
      }
      ACCEL_RETURN_IF_ERROR(launch_status(target, matmul(frame, node, products_in_l2, gemm, target), "cuBLASLt"));
      continue;
    }
    if (node.kind == OpKind::rope && step + 1 < steps.size()) {
      const Node& next = plan.graph().nodes()[steps[step + 1]];
      if (frame.count(node.output) != 0 && rotates_in_attention(frame, node, next)) {
        const AttentionRotary rotary{.positions = frame.at<std::int32_t>(node.inputs[1]), .theta = node.theta};
        // Where the resident kernel does not take the attention, the two run apart.
        if (const cudaError_t launched = launch_attention(frame, next, &rotary); launched != cudaErrorNotSupported) {
          ACCEL_RETURN_IF_ERROR(target.check(launched, "launching the attention with its rope"));
          ++step;
          continue;
        }
      }
    }
    if (frame.count(node.output) == 0) continue;
    // The step's name is put together only for an error: a run launches every step.
    if (const cudaError_t launched = launch(frame, node); launched != cudaSuccess)
      return target.check(launched, fmt::format("launching {}", to_string(node.kind)));
  }
  return Status();
}

}  // namespace accel::graph::cuda

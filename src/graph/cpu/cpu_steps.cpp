// The CPU interpreter of an executable's steps, at the actual extent. Sequence offsets are data from outside the
// graph, so every op that reads them checks them first (monotone, inside the rows, each sequence at most the
// attention's max_length): a bad offset is an error naming the op, never a read outside the arena.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "graph/cpu/cpu_executables.hpp"
#include "graph/kernels/cpu_kernels.hpp"
#include "graph/step_frame.hpp"
#include "libs/blas/openblas_kernels.hpp"

namespace accel::graph::cpu {

namespace {

// The CPU's frame: tensors are float unless an op says otherwise.
struct Frame : StepFrame {
  MatmulPacks* packs = nullptr;
  WeightsIdentity weights_identity;
  const Bf16Graph* bf16 = nullptr;
  template <class T = float>
  [[nodiscard]] T* at(std::uint32_t t) const {
    return StepFrame::at<T>(t);
  }
};

Status check_offsets(const Node& node, const std::int32_t* offsets, std::int64_t sequences, std::int64_t rows,
                     std::int32_t max_length) {
  std::int64_t previous = 0;
  for (std::int64_t s = 0; s <= sequences; ++s) {
    const std::int64_t o = offsets[s];
    if (o < previous || o > rows || (s > 0 && max_length > 0 && o - previous > max_length))
      return invalid_argument(
          fmt::format("{}: sequence offsets must rise from 0 within the {} rows, each sequence at "
                      "most {} long; offset {} is {} after {}",
                      to_string(node.kind), rows, max_length, s, o, previous));
    previous = o;
  }
  return Status();
}

Status run_product(const Frame& f, const Node& node, std::uint32_t index) {
  const std::uint32_t x = node.inputs[0], w = node.inputs[1];
  const std::int64_t rows = f.dim(x, 0), k = f.dim(x, 1), n = f.dim(node.output, 1);
  if (std::max({rows, k, n}) > std::numeric_limits<std::int32_t>::max())
    return not_supported(fmt::format("matmul: OpenBLAS takes 32-bit sizes; {} x {} by {} exceeds them", rows, k, n));
  const float* bias = node.inputs[2] != Node::kNone ? f.at(node.inputs[2]) : nullptr;
  // Weights that are not parameters (computed by the graph) change every run: nothing to pack once.
  const bool stored_weights =
      f.plan.slot(w).storage == Storage::weights && (!bias || f.plan.slot(node.inputs[2]).storage == Storage::weights);
  // A bf16 graph's parameter weights: packed as bf16 from the caller's buffer, for every row count (their places in
  // the f32 copy's weights are not written).
  const std::optional<std::uint64_t> bf16_weights = f.bf16 ? f.bf16->packed_from(w) : std::nullopt;
  // Parameter weights are packed once for every row count, a query's included: the packs are shared by the buckets
  // of a graph, and on the AVX-512 VM one query ran in 2.4-2.6 ms packed against 4.5-4.7 ms with our own products
  // reading the weights in place (docs/PERFORMANCE.md §45).
  if (bf16_weights || (stored_weights && packed_matmul_pays())) {
    MatmulPacks::Matmul matmul{.node = index,
                               .w = f.at(w),
                               .transpose_w = node.transpose_b,
                               .bias = bias,
                               .k = k,
                               .n = n,
                               .activation = node.activation};
    if (bf16_weights) {
      matmul.w = f.weights_identity.base + *bf16_weights;
      matmul.w_dtype = DType::bf16;
      matmul.precision = MatmulPrecision::bf16;
    }
    // A bias the graph computes is packed with the weights: such a matmul packs again on every run.
    const WeightsIdentity identity = stored_weights ? f.weights_identity : WeightsIdentity{.base = nullptr};
    Result<std::shared_ptr<const PackedMatmul>> packed = f.packs->get(matmul, identity);
    if (!packed.ok()) return packed.status();
    return (*packed)->run(f.at(x), rows, f.at(node.output));
  }
  blas::ensure_openblas_kernels();
  matmul_bias_activation(f.at(x), f.at(w), node.transpose_b, bias, rows, k, n, node.activation, f.at(node.output));
  return Status();
}

// The product, then its residual (the builder allows one only after the identity activation) added in place.
Status run_matmul(const Frame& f, const Node& node, std::uint32_t index) {
  ACCEL_RETURN_IF_ERROR(run_product(f, node, index));
  if (node.inputs.size() > 3) {
    float* out = f.at(node.output);
    binary(BinaryOp::add, out, f.at(node.inputs[3]), Broadcast::none, f.rows(node.output), f.last_dim(node.output),
           out);
  }
  return Status();
}

Status run_node(const Frame& f, const Node& node, std::uint32_t index) {
  const std::uint32_t out = node.output;
  const auto& in = node.inputs;
  switch (node.kind) {
    case OpKind::gather:
      gather_rows(f.at(in[0]), f.dim(in[0], 0), f.dim(in[0], 1), f.at<std::int32_t>(in[1]), f.dim(in[1], 0), f.at(out));
      return Status();
    case OpKind::sequence_positions: {
      const std::int64_t sequences = f.dim(in[0], 0) - 1, rows = f.dim(out, 0);
      ACCEL_RETURN_IF_ERROR(check_offsets(node, f.at<std::int32_t>(in[0]), sequences, rows, 0));
      sequence_positions(f.at<std::int32_t>(in[0]), sequences, rows, f.at<std::int32_t>(out));
      return Status();
    }
    case OpKind::matmul: return run_matmul(f, node, index);
    case OpKind::unary: unary(node.activation, f.at(in[0]), f.at(out), f.count(out)); return Status();
    case OpKind::binary: {
      const bool row = f.info(in[1]).shape != f.info(in[0]).shape;
      binary(node.binary, f.at(in[0]), f.at(in[1]), row ? Broadcast::row : Broadcast::none, f.rows(out),
             f.last_dim(out), f.at(out), node.activation);
      return Status();
    }
    case OpKind::layer_norm:
    case OpKind::rms_norm: {
      const std::int64_t width = f.last_dim(out), rows = f.rows(out);
      if (node.kind == OpKind::layer_norm) {
        layer_norm(f.at(in[0]), f.at(in[3]), f.at(in[1]), f.at(in[2]), rows, width, node.eps, f.at(out), nullptr);
      } else {
        rms_norm(f.at(in[0]), f.at(in[2]), f.at(in[1]), rows, width, node.eps, f.at(out), nullptr);
      }
      return Status();
    }
    case OpKind::attention: {
      const AttentionOperands a = attention_operands(f, node);
      const std::int64_t rows = f.dim(in[0], 0), sequences = f.dim(in[3], 0) - 1;
      ACCEL_RETURN_IF_ERROR(check_offsets(node, f.at<std::int32_t>(in[3]), sequences, rows, node.max_length));
      packed_attention(f.at(a.q), a.q_stride, f.at(a.k) + a.k_first, a.kv_stride, f.at(a.v) + a.v_first, a.kv_stride,
                       f.at<std::int32_t>(in[3]), sequences, node.heads, static_cast<int>(a.head_dim), node.scale,
                       f.at(out), f.dim(out, 1), node.kv_heads, node.causal, node.window);
      return Status();
    }
    case OpKind::gated: {
      const GatedExtent e = gated_extent(node.gate_layout, f.rows(out), f.last_dim(out));
      gated(f.at(in[0]), e.rows, e.width, node.activation, f.at(out));
      return Status();
    }
    case OpKind::rope: {
      rope(f.at(in[0]), f.at<std::int32_t>(in[1]), f.dim(in[0], 0),
           {.heads = node.heads,
            .kv_heads = node.kv_heads,
            .head_dim = rope_head_dim(f, node),
            .query_norm = f.at(in[2]),
            .key_norm = f.at(in[3]),
            .eps = node.eps},
           node.theta, f.at(out));
      return Status();
    }
    case OpKind::pool: {
      const std::int64_t sequences = f.dim(in[1], 0) - 1;
      ACCEL_RETURN_IF_ERROR(check_offsets(node, f.at<std::int32_t>(in[1]), sequences, f.dim(in[0], 0), 0));
      pool(node.pool, f.at(in[0]), f.dim(in[0], 1), f.at<std::int32_t>(in[1]), sequences, f.at(out));
      return Status();
    }
    case OpKind::l2_normalize: {
      l2_normalize(f.at(in[0]), f.rows(out), f.last_dim(out), node.eps, f.at(out));
      return Status();
    }
    case OpKind::transpose: strided_copy(f.at(in[0]), transpose_layout(f, node), f.at(out)); return Status();
    case OpKind::slice: {
      const SliceSource source = slice_source(f, node);
      strided_copy(f.at(in[0]) + source.first, source.layout, f.at(out));
      return Status();
    }
    case OpKind::cast:
      if (!cast(f.info(in[0]).dtype, f.at<void>(in[0]), f.info(out).dtype, f.at<void>(out), f.count(out)))
        return not_supported("cast: between f32, f16 and bf16 only");
      return Status();
    case OpKind::input:
    case OpKind::parameter:
    case OpKind::reshape: return Status();
  }
  return internal_error(fmt::format("no CPU step for {}", to_string(node.kind)));
}

}  // namespace

Status run_steps(const ExecutablePlan& plan, const SymbolValues& extent, std::byte* arena, const RunWeights& weights,
                 MatmulPacks& packs, std::vector<StepTime>* times) {
  const Frame frame{{.plan = plan, .extent = extent, .arena = arena, .weights = weights.data},
                    &packs,
                    weights.identity,
                    weights.bf16};
  if (!times) {
    for (std::uint32_t index : plan.steps()) ACCEL_RETURN_IF_ERROR(run_node(frame, plan.graph().nodes()[index], index));
    return Status();
  }
  for (std::uint32_t index : plan.steps()) {
    const auto start = std::chrono::steady_clock::now();
    ACCEL_RETURN_IF_ERROR(run_node(frame, plan.graph().nodes()[index], index));
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    times->push_back({.node = index, .microseconds = took.count()});
  }
  return Status();
}

}  // namespace accel::graph::cpu

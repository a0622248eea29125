// GraphBuilder: each op checks its operands and infers its result's shape as it is added; the first error is kept
// (naming the op) and returned by build().
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "accel/graph/graph.hpp"

namespace accel::graph {

namespace {

bool is_float(DType dtype) { return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16; }
// What the graph's kernels store: floating tensors, and i32 for token ids and sequence offsets.
bool is_tensor_dtype(DType dtype) { return is_float(dtype) || dtype == DType::i32; }

// The same extent whatever the symbols' values.
bool same(const Dim& a, const Dim& b) { return a == b; }

}  // namespace

GraphBuilder& GraphBuilder::bucket(std::string symbol, Ladder ladder) {
  if (ladder.rungs.empty() || ladder.rungs.front() < 1 || !std::is_sorted(ladder.rungs.begin(), ladder.rungs.end()) ||
      std::adjacent_find(ladder.rungs.begin(), ladder.rungs.end()) != ladder.rungs.end()) {
    fail(invalid_argument(fmt::format("bucket ladder of '{}' must be ascending positive rungs", symbol)));
    return *this;
  }
  graph_->buckets_[std::move(symbol)] = std::move(ladder);
  return *this;
}

void GraphBuilder::fail(Status status) {
  if (error_.ok()) error_ = std::move(status);
}

const TensorInfo* GraphBuilder::info(Tensor t, std::string_view op, std::string_view role) {
  if (t.id >= graph_->tensors_.size()) {
    fail(invalid_argument(fmt::format("{}: {} is not a tensor of this graph", op, role)));
    return nullptr;
  }
  return &graph_->tensors_[t.id];
}

Tensor GraphBuilder::add(Node node, TensorInfo result) {
  if (!error_.ok()) return {};
  for (const Dim& d : result.shape) {
    if (d.is_constant() && d.offset < 0) {
      fail(
          invalid_argument(fmt::format("{}: negative dimension in {}", to_string(node.kind), to_string(result.shape))));
      return {};
    }
  }
  const auto id = static_cast<std::uint32_t>(graph_->tensors_.size());
  if (result.name.empty()) result.name = fmt::format("{}#{}", to_string(node.kind), id);
  graph_->tensors_.push_back(std::move(result));
  node.output = id;
  graph_->nodes_.push_back(std::move(node));
  return {id};
}

Tensor GraphBuilder::input(std::string name, DType dtype, Shape shape, Padding padding) {
  if (name.empty()) fail(invalid_argument("input: a name is required"));
  if (!is_tensor_dtype(dtype))
    fail(invalid_argument(
        fmt::format("input '{}': dtype {} (graphs hold f32, f16, bf16 or i32)", name, to_string(dtype))));
  return add({.kind = OpKind::input, .padding = padding},
             {.name = std::move(name), .dtype = dtype, .shape = std::move(shape)});
}

Tensor GraphBuilder::parameter(std::string name, DType dtype, Shape shape) {
  if (name.empty()) fail(invalid_argument("parameter: a name is required"));
  if (!is_tensor_dtype(dtype))
    fail(invalid_argument(
        fmt::format("parameter '{}': dtype {} (graphs hold f32, f16, bf16 or i32)", name, to_string(dtype))));
  for (const Dim& d : shape)
    if (!d.is_constant()) fail(invalid_argument(fmt::format("parameter '{}': dims must be constants", name)));
  return add({.kind = OpKind::parameter}, {.name = std::move(name), .dtype = dtype, .shape = std::move(shape)});
}

Tensor GraphBuilder::gather(Tensor table, Tensor indices) {
  const TensorInfo* t = info(table, "gather", "table");
  const TensorInfo* i = info(indices, "gather", "indices");
  if (t == nullptr || i == nullptr) return {};
  if (t->shape.size() != 2 || i->shape.size() != 1 || i->dtype != DType::i32) {
    fail(invalid_argument(fmt::format("gather: table must be 2-D and indices 1-D i32, got {} and {} {}",
                                      to_string(t->shape), to_string(i->dtype), to_string(i->shape))));
    return {};
  }
  return add({.kind = OpKind::gather, .inputs = {table.id, indices.id}},
             {.dtype = t->dtype, .shape = {i->shape[0], t->shape[1]}});
}

Tensor GraphBuilder::sequence_positions(Tensor offsets, Dim rows) {
  const TensorInfo* o = info(offsets, "sequence_positions", "offsets");
  if (o == nullptr) return {};
  if (o->shape.size() != 1 || o->dtype != DType::i32) {
    fail(invalid_argument("sequence_positions: offsets must be 1-D i32"));
    return {};
  }
  return add({.kind = OpKind::sequence_positions, .inputs = {offsets.id}},
             {.dtype = DType::i32, .shape = {std::move(rows)}});
}

Tensor GraphBuilder::matmul(Tensor x, Tensor w, MatmulOptions options) {
  const TensorInfo* a = info(x, "matmul", "x");
  const TensorInfo* b = info(w, "matmul", "w");
  if (a == nullptr || b == nullptr) return {};
  if (a->shape.size() != 2 || b->shape.size() != 2 || !is_float(a->dtype) || a->dtype != b->dtype) {
    fail(invalid_argument(fmt::format("matmul: x and w must be 2-D of one floating dtype, got {} {} and {} {}",
                                      to_string(a->dtype), to_string(a->shape), to_string(b->dtype),
                                      to_string(b->shape))));
    return {};
  }
  const Dim& k_w = options.transpose_b ? b->shape[1] : b->shape[0];
  const Dim& n = options.transpose_b ? b->shape[0] : b->shape[1];
  if (!same(a->shape[1], k_w)) {
    fail(invalid_argument(fmt::format("matmul: inner dimensions differ: x {} and w {}{}", to_string(a->shape),
                                      to_string(b->shape), options.transpose_b ? " (transposed)" : "")));
    return {};
  }
  Node node{.kind = OpKind::matmul,
            .inputs = {x.id, w.id, Node::kNone},
            .activation = options.activation,
            .transpose_b = options.transpose_b};
  if (options.bias) {
    const TensorInfo* bias = info(*options.bias, "matmul", "bias");
    if (bias == nullptr) return {};
    if (bias->shape.size() != 1 || !same(bias->shape[0], n) || bias->dtype != a->dtype) {
      fail(invalid_argument(fmt::format("matmul: bias must be [{}] {}, got {} {}", n.to_string(), to_string(a->dtype),
                                        to_string(bias->dtype), to_string(bias->shape))));
      return {};
    }
    node.inputs[2] = options.bias->id;
  }
  if (options.residual) {
    const TensorInfo* residual = info(*options.residual, "matmul", "residual");
    if (residual == nullptr) return {};
    const Shape shape{a->shape[0], n};
    if (residual->shape != shape || residual->dtype != a->dtype || options.activation != Activation::identity) {
      fail(invalid_argument(fmt::format(
          "matmul: a residual must be {} {} and come with the identity activation, got {} {} and activation {}",
          to_string(a->dtype), to_string(shape), to_string(residual->dtype), to_string(residual->shape),
          to_string(options.activation))));
      return {};
    }
    node.inputs.push_back(options.residual->id);
  }
  return add(std::move(node), {.dtype = a->dtype, .shape = {a->shape[0], n}});
}

Tensor GraphBuilder::unary(Activation activation, Tensor x) {
  const TensorInfo* a = info(x, "unary", "x");
  if (a == nullptr) return {};
  if (!is_float(a->dtype)) fail(invalid_argument("unary: x must be floating point"));
  return add({.kind = OpKind::unary, .inputs = {x.id}, .activation = activation},
             {.dtype = a->dtype, .shape = a->shape});
}

Tensor GraphBuilder::binary(BinaryOp op, Tensor a, Tensor b, Activation a_activation) {
  const TensorInfo* l = info(a, "binary", "a");
  const TensorInfo* r = info(b, "binary", "b");
  if (l == nullptr || r == nullptr) return {};
  const bool row = r->shape.size() == 1 && !l->shape.empty() && same(r->shape[0], l->shape.back());
  if (!is_float(l->dtype) || l->dtype != r->dtype || (l->shape != r->shape && !row)) {
    fail(invalid_argument(fmt::format("binary: b must have a's shape {} or be one row [{}] of its dtype, got {} {}",
                                      to_string(l->shape), l->shape.empty() ? "" : l->shape.back().to_string(),
                                      to_string(r->dtype), to_string(r->shape))));
    return {};
  }
  return add({.kind = OpKind::binary, .inputs = {a.id, b.id}, .activation = a_activation, .binary = op},
             {.dtype = l->dtype, .shape = l->shape});
}

Tensor GraphBuilder::gated(Tensor x, Activation activation, GateLayout layout) {
  const TensorInfo* a = info(x, "gated", "x");
  if (a == nullptr) return {};
  if (a->shape.size() != 2 || !is_float(a->dtype) || !a->shape[1].is_constant() || a->shape[1].offset % 2 != 0 ||
      a->shape[1].offset == 0) {
    fail(invalid_argument(fmt::format("gated: x must be 2-D floating point of a constant even width, got {} {}",
                                      to_string(a->dtype), to_string(a->shape))));
    return {};
  }
  if (layout != GateLayout::halves && layout != GateLayout::groups_of_8) {
    fail(invalid_argument(fmt::format("gated: unknown gate layout {}", static_cast<int>(layout))));
    return {};
  }
  if (layout == GateLayout::groups_of_8 && a->shape[1].offset % 16 != 0) {
    fail(invalid_argument(fmt::format("gated: x's width {} is not a multiple of 16, which gates in groups of 8 need",
                                      a->shape[1].offset)));
    return {};
  }
  return add({.kind = OpKind::gated, .inputs = {x.id}, .activation = activation, .gate_layout = layout},
             {.dtype = a->dtype, .shape = {a->shape[0], Dim::of(a->shape[1].offset / 2)}});
}

namespace {
// A norm's operands: x floating with a last dim, gamma/beta [last] of x's dtype, residual x's shape.
Status check_norm(std::string_view op, const TensorInfo& x, const TensorInfo& gamma, const TensorInfo* beta,
                  const TensorInfo* residual) {
  if (!is_float(x.dtype) || x.shape.empty()) return invalid_argument(fmt::format("{}: x must be floating point", op));
  for (const TensorInfo* v : {&gamma, beta}) {
    if (v != nullptr && (v->shape.size() != 1 || !same(v->shape[0], x.shape.back()) || v->dtype != x.dtype))
      return invalid_argument(fmt::format("{}: gamma and beta must be [{}] {}, got {} {}", op,
                                          x.shape.back().to_string(), to_string(x.dtype), to_string(v->dtype),
                                          to_string(v->shape)));
  }
  if (residual != nullptr && (residual->shape != x.shape || residual->dtype != x.dtype))
    return invalid_argument(fmt::format("{}: residual must be {} {}, got {}", op, to_string(x.dtype),
                                        to_string(x.shape), to_string(residual->shape)));
  return Status();
}
}  // namespace

Tensor GraphBuilder::layer_norm(Tensor x, Tensor gamma, std::optional<Tensor> beta, float eps,
                                std::optional<Tensor> residual) {
  const TensorInfo* a = info(x, "layer_norm", "x");
  const TensorInfo* g = info(gamma, "layer_norm", "gamma");
  const TensorInfo* b = beta ? info(*beta, "layer_norm", "beta") : nullptr;
  const TensorInfo* r = residual ? info(*residual, "layer_norm", "residual") : nullptr;
  if (a == nullptr || g == nullptr || (beta && b == nullptr) || (residual && r == nullptr)) return {};
  if (Status s = check_norm("layer_norm", *a, *g, b, r); !s.ok()) {
    fail(std::move(s));
    return {};
  }
  if (!(eps > 0.0f)) fail(invalid_argument("layer_norm: eps must be positive"));
  return add({.kind = OpKind::layer_norm,
              .inputs = {x.id, gamma.id, beta ? beta->id : Node::kNone, residual ? residual->id : Node::kNone},
              .eps = eps},
             {.dtype = a->dtype, .shape = a->shape});
}

Tensor GraphBuilder::rms_norm(Tensor x, Tensor gamma, float eps, std::optional<Tensor> residual) {
  const TensorInfo* a = info(x, "rms_norm", "x");
  const TensorInfo* g = info(gamma, "rms_norm", "gamma");
  const TensorInfo* r = residual ? info(*residual, "rms_norm", "residual") : nullptr;
  if (a == nullptr || g == nullptr || (residual && r == nullptr)) return {};
  if (Status s = check_norm("rms_norm", *a, *g, nullptr, r); !s.ok()) {
    fail(std::move(s));
    return {};
  }
  if (!(eps > 0.0f)) fail(invalid_argument("rms_norm: eps must be positive"));
  return add({.kind = OpKind::rms_norm, .inputs = {x.id, gamma.id, residual ? residual->id : Node::kNone}, .eps = eps},
             {.dtype = a->dtype, .shape = a->shape});
}

Tensor GraphBuilder::rope(Tensor x, Tensor positions, std::int32_t heads, float theta, RopeOptions options) {
  const TensorInfo* a = info(x, "rope", "x");
  const TensorInfo* p = info(positions, "rope", "positions");
  if (a == nullptr || p == nullptr) return {};
  if (a->shape.size() != 2 || !is_float(a->dtype) || p->shape.size() != 1 || p->dtype != DType::i32 ||
      p->shape[0] != a->shape[0]) {
    fail(invalid_argument(fmt::format("rope: x must be 2-D floating point and positions i32 [{}], got {} and {} {}",
                                      a->shape.empty() ? "" : a->shape[0].to_string(), to_string(a->shape),
                                      to_string(p->dtype), to_string(p->shape))));
    return {};
  }
  const Dim& width = a->shape[1];
  const std::int64_t blocks = std::int64_t{heads} + 2 * std::int64_t{std::max(options.kv_heads, 0)};
  if (heads < 1 || options.kv_heads < 0 || !width.is_constant() || width.offset % blocks != 0 ||
      width.offset / blocks % 2 != 0 || width.offset == 0) {
    fail(invalid_argument(fmt::format(
        "rope: {} heads{} must divide the constant width {} into even head dims", heads,
        options.kv_heads > 0 ? fmt::format(" and 2 x {} packed k/v heads", options.kv_heads) : std::string(),
        width.to_string())));
    return {};
  }
  if (!(theta > 1.0f) || !std::isfinite(theta)) {
    fail(invalid_argument(fmt::format("rope: theta {} must be a finite number above 1", theta)));
    return {};
  }
  const std::int64_t head_dim = width.offset / blocks;
  const bool normalised = options.query_norm.has_value();
  if (options.key_norm.has_value() != (normalised && options.kv_heads > 0)) {
    fail(invalid_argument("rope: key_norm goes with query_norm, and only with packed q|k|v (kv_heads > 0)"));
    return {};
  }
  if ((normalised || options.kv_heads > 0) && head_dim > kMaxNormedRopeHeadDim) {
    fail(invalid_argument(fmt::format("rope: packed or normalised heads take head dims of at most {}, got {}",
                                      kMaxNormedRopeHeadDim, head_dim)));
    return {};
  }
  std::vector<std::uint32_t> inputs{x.id, positions.id, Node::kNone, Node::kNone};
  for (int i = 0; i < 2; ++i) {
    const std::optional<Tensor>& norm = i == 0 ? options.query_norm : options.key_norm;
    if (!norm) continue;
    const TensorInfo* g = info(*norm, "rope", i == 0 ? "query_norm" : "key_norm");
    if (g == nullptr) return {};
    if (g->dtype != a->dtype || g->shape != Shape{Dim::of(head_dim)}) {
      fail(invalid_argument(fmt::format("rope: {} must be {} [{}], got {} {}", i == 0 ? "query_norm" : "key_norm",
                                        to_string(a->dtype), head_dim, to_string(g->dtype), to_string(g->shape))));
      return {};
    }
    inputs[static_cast<std::size_t>(2 + i)] = norm->id;
  }
  if (normalised && !(options.eps > 0.0f)) {
    fail(invalid_argument("rope: the norms' eps must be positive"));
    return {};
  }
  return add({.kind = OpKind::rope,
              .inputs = std::move(inputs),
              .eps = normalised ? options.eps : 0.0f,
              .heads = heads,
              .kv_heads = options.kv_heads,
              .theta = theta},
             {.dtype = a->dtype, .shape = a->shape});
}

Tensor GraphBuilder::pool(Tensor x, Tensor offsets, PoolMode mode) {
  const TensorInfo* a = info(x, "pool", "x");
  const TensorInfo* o = info(offsets, "pool", "offsets");
  if (a == nullptr || o == nullptr) return {};
  if (a->shape.size() != 2 || !is_float(a->dtype) || o->shape.size() != 1 || o->dtype != DType::i32) {
    fail(invalid_argument("pool: x must be 2-D floating point and offsets 1-D i32"));
    return {};
  }
  if (mode > PoolMode::weighted_mean) {
    fail(invalid_argument(fmt::format("pool: mode {} is not a PoolMode", static_cast<int>(mode))));
    return {};
  }
  Dim sequences = o->shape[0];
  sequences.offset -= 1;
  return add({.kind = OpKind::pool, .inputs = {x.id, offsets.id}, .pool = mode},
             {.dtype = a->dtype, .shape = {sequences, a->shape[1]}});
}

Tensor GraphBuilder::l2_normalize(Tensor x, float eps) {
  const TensorInfo* a = info(x, "l2_normalize", "x");
  if (a == nullptr) return {};
  if (a->shape.empty() || !is_float(a->dtype)) fail(invalid_argument("l2_normalize: x must be floating point"));
  return add({.kind = OpKind::l2_normalize, .inputs = {x.id}, .eps = eps}, {.dtype = a->dtype, .shape = a->shape});
}

Tensor GraphBuilder::reshape(Tensor x, Shape shape) {
  const TensorInfo* a = info(x, "reshape", "x");
  if (a == nullptr) return {};
  // Symbols may only pass through unchanged in the leading dim; the constant rest must hold the same elements.
  // -1 for a symbol or a product past int64 (sizes are checked in full when the graph is finished).
  auto constant_product = [](const Shape& s, std::size_t from) {
    std::int64_t p = 1;
    for (std::size_t i = from; i < s.size() && p >= 0; ++i)
      if (!s[i].is_constant() || s[i].offset < 0 || __builtin_mul_overflow(p, s[i].offset, &p)) p = -1;
    return p;
  };
  const bool leading_symbol = !a->shape.empty() && !a->shape[0].is_constant();
  const bool ok =
      leading_symbol
          ? (!shape.empty() && shape[0] == a->shape[0] && constant_product(shape, 1) == constant_product(a->shape, 1) &&
             constant_product(a->shape, 1) >= 0)
          : (constant_product(shape, 0) == constant_product(a->shape, 0) && constant_product(a->shape, 0) >= 0);
  if (!ok) {
    fail(invalid_argument(fmt::format("reshape: {} cannot become {}", to_string(a->shape), to_string(shape))));
    return {};
  }
  return add({.kind = OpKind::reshape, .inputs = {x.id}}, {.dtype = a->dtype, .shape = std::move(shape)});
}

Tensor GraphBuilder::transpose(Tensor x, std::vector<std::int32_t> permutation) {
  const TensorInfo* a = info(x, "transpose", "x");
  if (a == nullptr) return {};
  std::vector<std::int32_t> sorted = permutation;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int32_t> identity(a->shape.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity || a->shape.size() > 4) {
    fail(invalid_argument(fmt::format("transpose: the permutation must reorder the {} dims of {} (at most 4)",
                                      a->shape.size(), to_string(a->shape))));
    return {};
  }
  Shape shape;
  for (std::int32_t p : permutation) shape.push_back(a->shape[static_cast<std::size_t>(p)]);
  return add({.kind = OpKind::transpose, .inputs = {x.id}, .permutation = std::move(permutation)},
             {.dtype = a->dtype, .shape = std::move(shape)});
}

Tensor GraphBuilder::slice(Tensor x, std::int32_t axis, std::int64_t begin, std::int64_t end) {
  const TensorInfo* a = info(x, "slice", "x");
  if (a == nullptr) return {};
  if (axis < 0 || static_cast<std::size_t>(axis) >= a->shape.size() || a->shape.size() > 4 ||
      !a->shape[static_cast<std::size_t>(axis)].is_constant() || begin < 0 || end < begin ||
      end > a->shape[static_cast<std::size_t>(axis)].offset) {
    fail(invalid_argument(fmt::format("slice: [{}, {}) along dim {} is not inside the constant dims of {}", begin, end,
                                      axis, to_string(a->shape))));
    return {};
  }
  Shape shape = a->shape;
  shape[static_cast<std::size_t>(axis)] = Dim::of(end - begin);
  return add({.kind = OpKind::slice, .inputs = {x.id}, .axis = axis, .begin = begin, .end = end},
             {.dtype = a->dtype, .shape = std::move(shape)});
}

Tensor GraphBuilder::cast(Tensor x, DType dtype) {
  const TensorInfo* a = info(x, "cast", "x");
  if (a == nullptr) return {};
  if (!is_float(a->dtype) || !is_float(dtype)) fail(invalid_argument("cast: between f32, f16 and bf16 only"));
  return add({.kind = OpKind::cast, .inputs = {x.id}}, {.dtype = dtype, .shape = a->shape});
}

void GraphBuilder::output(std::string name, Tensor x) {
  if (info(x, "output", name) == nullptr) return;
  if (name.empty()) fail(invalid_argument("output: a name is required"));
  graph_->outputs_.push_back({.name = std::move(name), .tensor = x.id});
}

Result<std::shared_ptr<const Graph>> GraphBuilder::build() {
  if (!error_.ok()) return error_;
  ACCEL_RETURN_IF_ERROR(graph_->finish());
  std::shared_ptr<const Graph> built = std::move(graph_);
  graph_ = std::shared_ptr<Graph>(new Graph());
  return built;
}

}  // namespace accel::graph

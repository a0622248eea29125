// Graph: validation of the whole (names, buckets), the weights layout, and the canonical encoding, which is
// also how a graph crosses to an isolated worker and what keys its executables. Decoding replays the encoded ops
// through a GraphBuilder, so bytes from outside are checked by the same rules as a graph built here.
#include <fmt/format.h>

#include <set>

#include "accel/core/byte_codec.hpp"
#include "accel/graph/graph.hpp"
#include "graph/executable_plan.hpp"
#include "graph/graph_storage.hpp"

namespace accel::graph {

namespace {
// 3: rope, attention's kv_heads and causal; 4: its window; 5: binary's activation of a; 6: rope's packed q|k|v and
// per-head norms, and gated; 7: gated's layout
constexpr std::uint32_t kEncodingVersion = 7;
constexpr std::uint64_t kParameterAlignment = 256;

void write_shape(ByteWriter& w, const Shape& shape) {
  w.pod(static_cast<std::uint32_t>(shape.size()));
  for (const Dim& d : shape) w.string(d.symbol).pod(d.offset);
}

bool read_shape(ByteReader& r, Shape& shape) {
  std::uint32_t n = 0;
  r.pod(n);
  if (!r.ok() || n > 8) return false;
  shape.resize(n);
  for (Dim& d : shape) r.string(d.symbol).pod(d.offset);
  return r.ok();
}
}  // namespace

std::string Dim::to_string() const {
  if (is_constant()) return std::to_string(offset);
  if (offset == 0) return symbol;
  return fmt::format("{}{}{}", symbol, offset > 0 ? "+" : "", offset);
}

std::string to_string(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + shape[i].to_string();
  return out + "]";
}

Ladder Ladder::powers_of_two(std::int64_t min, std::int64_t max) {
  Ladder ladder;
  for (std::int64_t v = std::max<std::int64_t>(min, 1); v<max; v = v> max / 2 ? max : v * 2) ladder.rungs.push_back(v);
  ladder.rungs.push_back(max);
  return ladder;
}

Ladder Ladder::arithmetic(std::int64_t step, std::int64_t max) {
  Ladder ladder;
  const std::int64_t stride = std::max<std::int64_t>(step, 1);
  for (std::int64_t v = stride; v<max; v = v> max - stride ? max : v + stride) ladder.rungs.push_back(v);
  ladder.rungs.push_back(max);
  return ladder;
}

Result<std::int64_t> Ladder::rung_for(std::int64_t value) const {
  for (std::int64_t rung : rungs)
    if (value <= rung) return rung;
  return invalid_argument(fmt::format("{} is above the largest bucket, {}", value, rungs.empty() ? 0 : rungs.back()));
}

std::string_view to_string(OpKind kind) noexcept {
  switch (kind) {
    case OpKind::input: return "input";
    case OpKind::parameter: return "parameter";
    case OpKind::gather: return "gather";
    case OpKind::sequence_positions: return "sequence_positions";
    case OpKind::matmul: return "matmul";
    case OpKind::unary: return "unary";
    case OpKind::binary: return "binary";
    case OpKind::layer_norm: return "layer_norm";
    case OpKind::rms_norm: return "rms_norm";
    case OpKind::attention: return "attention";
    case OpKind::pool: return "pool";
    case OpKind::l2_normalize: return "l2_normalize";
    case OpKind::reshape: return "reshape";
    case OpKind::transpose: return "transpose";
    case OpKind::slice: return "slice";
    case OpKind::cast: return "cast";
    case OpKind::rope: return "rope";
    case OpKind::gated: return "gated";
  }
  return "unknown";
}

std::string_view to_string(PoolMode mode) noexcept {
  switch (mode) {
    case PoolMode::mean: return "mean";
    case PoolMode::max: return "max";
    case PoolMode::first: return "first";
    case PoolMode::last: return "last";
    case PoolMode::mean_sqrt_length: return "mean_sqrt_length";
    case PoolMode::weighted_mean: return "weighted_mean";
  }
  return "unknown";
}

const Graph::ParameterSlot* Graph::parameter(std::string_view name) const noexcept {
  for (const ParameterSlot& slot : parameters_)
    if (tensors_[slot.tensor].name == name) return &slot;
  return nullptr;
}

Status Graph::finish() {
  if (outputs_.empty()) return invalid_argument("graph: no outputs");
  ACCEL_RETURN_IF_ERROR(check_sizes(*this, {}));
  std::set<std::string, std::less<>> names;
  std::set<std::string, std::less<>> symbols;
  for (const Node& node : nodes_) {
    const TensorInfo& t = tensors_[node.output];
    for (const Dim& d : t.shape)
      if (!d.is_constant()) symbols.insert(d.symbol);
    if (node.kind != OpKind::input && node.kind != OpKind::parameter) continue;
    if (!names.insert(t.name).second)
      return invalid_argument(fmt::format("graph: the name '{}' is used twice", t.name));
    inputs_.push_back(static_cast<std::uint32_t>(&node - nodes_.data()));
  }
  for (const Output& out : outputs_)
    if (!names.insert(out.name).second)
      return invalid_argument(fmt::format("graph: the output name '{}' is used twice", out.name));
  for (const auto& [symbol, ladder] : buckets_)
    if (!symbols.contains(symbol))
      return invalid_argument(fmt::format("graph: bucketed symbol '{}' is not a dim of any tensor", symbol));
  symbols_.assign(symbols.begin(), symbols.end());
  // Padding a bucketed symbol adds rows that no real row may read: the ops mix rows only within sequences
  // (attention, pool, through offsets), so a bucketed symbol may only size a tensor's leading dim.
  for (const TensorInfo& t : tensors_)
    for (std::size_t i = 1; i < t.shape.size(); ++i)
      if (buckets_.contains(t.shape[i].symbol))
        return invalid_argument(
            fmt::format("graph: bucketed symbol '{}' sizes dim {} of {} {}; only a leading dim "
                        "may be padded",
                        t.shape[i].symbol, i, t.name, to_string(t.shape)));
  // ... and never a dim that an op reduces over or indexes into: a matmul's w, a gather's table.
  for (const Node& node : nodes_) {
    if (node.kind != OpKind::matmul && node.kind != OpKind::gather) continue;
    const TensorInfo& t = tensors_[node.inputs[node.kind == OpKind::matmul ? 1 : 0]];
    for (const Dim& d : t.shape)
      if (buckets_.contains(d.symbol))
        return invalid_argument(fmt::format("graph: bucketed symbol '{}' sizes {} of a {}, whose rows are all read",
                                            d.symbol, t.name, to_string(node.kind)));
  }

  for (std::uint32_t index : inputs_) {
    const Node& node = nodes_[index];
    if (node.kind != OpKind::parameter) continue;
    std::uint64_t count = 1;
    for (const Dim& d : tensors_[node.output].shape) count *= static_cast<std::uint64_t>(d.offset);
    const std::uint64_t bytes = count * size_of(tensors_[node.output].dtype);
    parameters_.push_back({.tensor = node.output, .offset = weight_bytes_, .bytes = bytes});
    weight_bytes_ += (bytes + kParameterAlignment - 1) / kParameterAlignment * kParameterAlignment;
  }

  ByteWriter w;
  w.pod(kEncodingVersion).pod(static_cast<std::uint32_t>(nodes_.size()));
  for (const Node& node : nodes_) {
    const TensorInfo& t = tensors_[node.output];
    w.fields(node.kind, node.activation, node.binary, node.transpose_b, node.eps, node.scale, node.heads, node.kv_heads,
             node.causal, node.window, node.theta, node.max_length, node.axis, node.begin, node.end, node.padding,
             node.pool, node.gate_layout);
    w.pods(node.inputs).pods(node.permutation).string(t.name).pod(t.dtype);
    write_shape(w, t.shape);
  }
  w.pod(static_cast<std::uint32_t>(outputs_.size()));
  for (const Output& out : outputs_) w.string(out.name).pod(out.tensor);
  w.pod(static_cast<std::uint32_t>(buckets_.size()));
  for (const auto& [symbol, ladder] : buckets_) w.string(symbol).pods(ladder.rungs);
  encoding_ = w.take();
  return Status();
}

namespace {

Status damaged(std::string_view what) { return invalid_argument(fmt::format("graph encoding is damaged ({})", what)); }

// f32 for a floating dtype, the dtype itself otherwise.
DType f32_storage(DType dtype) {
  return dtype == DType::f16 || dtype == DType::bf16 || dtype == DType::f64 ? DType::f32 : dtype;
}

// The encoded ops replayed through a GraphBuilder; with `storage`, each input's, parameter's and cast's dtype is
// mapped through it (every other op's follows by inference).
Result<std::shared_ptr<const Graph>> replay(std::span<const std::byte> bytes, DType (*storage)(DType)) {
  ByteReader r(bytes);
  std::uint32_t version = 0, count = 0;
  r.fields(version, count);
  if (!r.ok() || version != kEncodingVersion) return damaged("version");
  GraphBuilder b;
  std::vector<Tensor> made;
  for (std::uint32_t i = 0; i < count; ++i) {
    Node node;
    TensorInfo t;
    r.fields(node.kind, node.activation, node.binary, node.transpose_b, node.eps, node.scale, node.heads, node.kv_heads,
             node.causal, node.window, node.theta, node.max_length, node.axis, node.begin, node.end, node.padding,
             node.pool, node.gate_layout);
    r.pods(node.inputs).pods(node.permutation).string(t.name).pod(t.dtype);
    if (!r.ok() || !read_shape(r, t.shape)) return damaged("node");
    if (storage != nullptr) t.dtype = storage(t.dtype);
    auto in = [&](std::size_t k) -> Tensor { return k < node.inputs.size() ? Tensor{node.inputs[k]} : Tensor{}; };
    auto opt = [&](std::size_t k) -> std::optional<Tensor> {
      if (k >= node.inputs.size() || node.inputs[k] == Node::kNone) return std::nullopt;
      return Tensor{node.inputs[k]};
    };
    switch (node.kind) {
      case OpKind::input: made.push_back(b.input(t.name, t.dtype, t.shape, node.padding)); break;
      case OpKind::parameter: made.push_back(b.parameter(t.name, t.dtype, t.shape)); break;
      case OpKind::gather: made.push_back(b.gather(in(0), in(1))); break;
      case OpKind::sequence_positions:
        made.push_back(b.sequence_positions(in(0), t.shape.empty() ? Dim{} : t.shape[0]));
        break;
      case OpKind::matmul:
        made.push_back(b.matmul(
            in(0), in(1),
            {.transpose_b = node.transpose_b, .bias = opt(2), .activation = node.activation, .residual = opt(3)}));
        break;
      case OpKind::unary: made.push_back(b.unary(node.activation, in(0))); break;
      case OpKind::binary: made.push_back(b.binary(node.binary, in(0), in(1), node.activation)); break;
      case OpKind::layer_norm: made.push_back(b.layer_norm(in(0), in(1), opt(2), node.eps, opt(3))); break;
      case OpKind::rms_norm: made.push_back(b.rms_norm(in(0), in(1), node.eps, opt(2))); break;
      case OpKind::attention: {
        const AttentionOptions options{
            .scale = node.scale, .kv_heads = node.kv_heads, .causal = node.causal, .window = node.window};
        made.push_back(node.packs_qkv()
                           ? b.attention_packed(in(0), in(3), node.heads, node.max_length, options)
                           : b.attention(in(0), in(1), in(2), in(3), node.heads, node.max_length, options));
        break;
      }
      case OpKind::rope:
        made.push_back(b.rope(in(0), in(1), node.heads, node.theta,
                              {.kv_heads = node.kv_heads, .query_norm = opt(2), .key_norm = opt(3), .eps = node.eps}));
        break;
      case OpKind::gated: made.push_back(b.gated(in(0), node.activation, node.gate_layout)); break;
      case OpKind::pool: made.push_back(b.pool(in(0), in(1), node.pool)); break;
      case OpKind::l2_normalize: made.push_back(b.l2_normalize(in(0), node.eps)); break;
      case OpKind::reshape: made.push_back(b.reshape(in(0), t.shape)); break;
      case OpKind::transpose: made.push_back(b.transpose(in(0), node.permutation)); break;
      case OpKind::slice: made.push_back(b.slice(in(0), node.axis, node.begin, node.end)); break;
      case OpKind::cast: made.push_back(b.cast(in(0), t.dtype)); break;
      default: return damaged("op kind");
    }
  }
  std::uint32_t outputs = 0;
  r.pod(outputs);
  for (std::uint32_t i = 0; r.ok() && i < outputs; ++i) {
    std::string name;
    std::uint32_t tensor = 0;
    r.string(name).pod(tensor);
    b.output(std::move(name), Tensor{tensor});
  }
  std::uint32_t buckets = 0;
  r.pod(buckets);
  for (std::uint32_t i = 0; r.ok() && i < buckets; ++i) {
    std::string symbol;
    Ladder ladder;
    r.string(symbol).pods(ladder.rungs);
    b.bucket(std::move(symbol), std::move(ladder));
  }
  if (!r.finished()) return damaged("length");
  return b.build();
}

}  // namespace

Result<std::shared_ptr<const Graph>> with_f32_storage(const Graph& graph) {
  return replay(graph.encoding(), f32_storage);
}

Result<std::shared_ptr<const Graph>> Graph::decode(std::span<const std::byte> bytes) {
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> graph, replay(bytes, nullptr));
  // Names of intermediate tensors are derived, so a valid encoding re-encodes to itself.
  if (graph->encoding() != std::vector<std::byte>(bytes.begin(), bytes.end())) return damaged("not canonical");
  return graph;
}

}  // namespace accel::graph

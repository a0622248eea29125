/// @file
/// accel::graph — tensor graphs with symbolic dimensions, compiled once per shape (or per bucket of shapes) into
/// executables that every device runs: the CPU (the reference and the default without a GPU) and CUDA, where an
/// executable's whole run is captured as one CUDA graph and replayed.
///
/// @code
///   graph::GraphBuilder b;
///   b.bucket("tokens", graph::Ladder::powers_of_two(64, 16384));        // executables per bucket, not per shape
///   auto ids = b.input("ids", DType::i32, {graph::Dim::sym("tokens")});
///   auto offsets = b.input("offsets", DType::i32, {graph::Dim::sym("sequences", 1)}, graph::Padding::repeat_last);
///   auto table = b.parameter("embeddings", DType::f16, {graph::Dim::of(30522), graph::Dim::of(384)});
///   auto x = b.gather(table, ids);                                     // [tokens, 384]
///   ...
///   b.output("pooled", b.l2_normalize(b.pool(x, offsets, graph::PoolMode::mean)));  // [sequences, 384]
///   Result<std::shared_ptr<const graph::Graph>> graph = b.build();
/// @endcode
///
/// The builder infers every shape as ops are added and records the first error (naming the op); build() returns
/// it. A built Graph is immutable and validated once: specialising it for a binding of its symbols only resolves
/// shapes, plans memory and makes plans (the template stage runs once per graph, not once per shape).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accel/core/dtype.hpp"
#include "accel/core/epilogue.hpp"
#include "accel/core/result.hpp"
#include "accel/graph/binary_op.hpp"
#include "accel/graph/gate_layout.hpp"
#include "accel/graph/pool_mode.hpp"

namespace accel::graph {

/// A dimension: a constant, or a symbol plus a constant ("tokens", "sequences + 1").
struct Dim {
  std::string symbol;       ///< empty: a constant
  std::int64_t offset = 0;  ///< the constant, or what is added to the symbol

  /// A constant dimension.
  static Dim of(std::int64_t value) { return {.offset = value}; }
  /// The dimension `name + plus`.
  static Dim sym(std::string name, std::int64_t plus = 0) { return {.symbol = std::move(name), .offset = plus}; }
  /// Whether the dimension has no symbol.
  [[nodiscard]] bool is_constant() const noexcept { return symbol.empty(); }
  /// "384", "tokens" or "sequences + 1".
  [[nodiscard]] std::string to_string() const;
  /// Equal when every field is.
  friend bool operator==(const Dim&, const Dim&) = default;
};
using Shape = std::vector<Dim>;  ///< A tensor's dimensions, outermost first.
/// The dimensions as "[tokens, 384]".
[[nodiscard]] std::string to_string(const Shape& shape);

/// Values of symbols, by name (ordered, so that its encoding is the same in every process).
using SymbolValues = std::map<std::string, std::int64_t, std::less<>>;

/// The extents an executable is compiled for, per symbol. A value is run by the executable of the smallest rung
/// at or above it; a value above the top rung is refused.
struct Ladder {
  std::vector<std::int64_t> rungs;  ///< ascending

  /// min, 2 min, 4 min, ... up to and including max (max is a rung even if not a power of two times min).
  static Ladder powers_of_two(std::int64_t min, std::int64_t max);
  /// step, 2 step, 3 step, ... up to max.
  static Ladder arithmetic(std::int64_t step, std::int64_t max);
  /// The given rungs, which must ascend.
  static Ladder explicit_rungs(std::vector<std::int64_t> rungs) { return {std::move(rungs)}; }

  /// The rung that runs `value`; out_of_range above the top.
  [[nodiscard]] Result<std::int64_t> rung_for(std::int64_t value) const;
  /// Equal when every field is.
  friend bool operator==(const Ladder&, const Ladder&) = default;
};

/// What an op of a graph computes (the builder's method of the same name says how).
enum class OpKind : std::uint8_t {
  input,               ///< bound at run time by its name (GraphBuilder::input)
  parameter,           ///< a constant tensor in the weights buffer a run binds (GraphBuilder::parameter)
  gather,              ///< table [V, W], indices i32 [R] -> [R, W]; an index outside the table gives a zero row
  sequence_positions,  ///< offsets i32 [S + 1] -> i32 [R]: each row's index within its sequence
  matmul,              ///< x [R, K] times w [K, N] (or w [N, K] transposed), + bias [N], then an activation
  unary,               ///< an activation, elementwise
  binary,              ///< activation(a) op b, elementwise; b the same shape or one row broadcast over a's rows
  layer_norm,          ///< (x + residual) normalised over the last dim, * gamma + beta
  rms_norm,            ///< (x + residual) / rms over the last dim * gamma
  attention,           ///< softmax(scale q k^T) v per sequence and head, over packed sequences (or q|k|v one tensor)
  pool,                ///< x [R, W], offsets [S + 1] -> [S, W]: each sequence's rows pooled (PoolMode; zeros if empty)
  l2_normalize,        ///< each row / max(its L2 norm, eps)
  reshape,             ///< a view: the same elements, another shape
  transpose,           ///< a permutation of the dims
  slice,               ///< [begin, end) along one dim
  cast,                ///< another element type
  rope,                ///< x [R, heads * head_dim] (or packed q|k|v), positions i32 [R]: rotary position embedding
  gated,               ///< x [R, 2 W] -> [R, W]: activation(gate) * up, x's columns laid out as GateLayout says
};
/// The kind's name, as errors and descriptions name ops.
[[nodiscard]] std::string_view to_string(OpKind kind) noexcept;

/// How the rows an input gets beyond its real extent (up to its bucket) are filled on the device.
enum class Padding : std::uint8_t {
  zero,         ///< zeros (token ids: the padding id 0)
  repeat_last,  ///< the last real element (sequence offsets: empty padding sequences)
};

/// A tensor of a graph: its name, element type and (possibly symbolic) shape.
struct TensorInfo {
  std::string name;          ///< inputs, parameters and outputs: their binding name; others: "<op>#<id>"
  DType dtype = DType::f32;  ///< element type
  Shape shape;               ///< dimensions, possibly symbolic
};

/// One op: what it reads, what it makes, its attributes (those its kind uses).
struct Node {
  OpKind kind = OpKind::input;                   ///< what the op computes
  std::vector<std::uint32_t> inputs;             ///< tensor ids; an absent optional input is kNone
  std::uint32_t output = 0;                      ///< id of the tensor the op makes
  Activation activation = Activation::identity;  ///< matmul and unary: the activation; binary: applied to a first
  BinaryOp binary = BinaryOp::add;               ///< binary: the operation
  bool transpose_b = false;                      ///< matmul: w is [N, K], used transposed
  float eps = 0.0f;                              ///< layer_norm, rms_norm, l2_normalize, rope's norms: the epsilon
  float scale = 0.0f;                            ///< attention: the factor of q k^T
  std::int32_t heads = 0;                        ///< attention: the number of query heads; rope: of heads
  std::int32_t kv_heads = 0;                     ///< attention: key/value heads (dividing heads); rope: packed's
  bool causal = false;                           ///< attention: each query sees only the keys up to its own
  std::int32_t window = 0;                       ///< attention: > 0: each query sees keys within window of it
  float theta = 0.0f;                            ///< rope: the base of the rotation frequencies
  std::int32_t max_length = 0;                   ///< attention: the longest sequence it runs
  std::int32_t axis = 0;                         ///< slice
  /// slice: the first index kept, then (end) one past the last
  std::int64_t begin = 0, end = 0;              ///< slice
  std::vector<std::int32_t> permutation;        ///< transpose: the new order of the dims
  Padding padding = Padding::zero;              ///< input
  PoolMode pool = PoolMode::mean;               ///< pool: how each sequence's rows are pooled
  GateLayout gate_layout = GateLayout::halves;  ///< gated: where each output's gate and up columns are

  static constexpr std::uint32_t kNone = 0xffffffffu;  ///< The id of an absent optional input.
  /// An attention whose q, k and v are column blocks of its first input (GraphBuilder::attention_packed).
  [[nodiscard]] bool packs_qkv() const noexcept {
    return kind == OpKind::attention && inputs.size() == 4 && inputs[1] == kNone && inputs[2] == kNone;
  }
  /// Equal when every field is.
  friend bool operator==(const Node&, const Node&) = default;
};

/// An immutable, validated graph. Tensors and nodes in topological order (an op's inputs come before it).
class Graph {
 public:
  /// A named output of the graph and the tensor it binds to.
  struct Output {
    std::string name;          ///< the binding name
    std::uint32_t tensor = 0;  ///< the tensor's id
    /// Equal when every field is.
    friend bool operator==(const Output&, const Output&) = default;
  };
  /// Where a parameter lives in the weights buffer a run binds (bytes, 256-aligned).
  struct ParameterSlot {
    std::uint32_t tensor = 0;  ///< the parameter's tensor id
    std::uint64_t offset = 0;  ///< where the parameter starts in the weights buffer
    std::uint64_t bytes = 0;   ///< its size
  };

  /// Every tensor, indexed by id.
  [[nodiscard]] const std::vector<TensorInfo>& tensors() const noexcept { return tensors_; }
  /// The ops, in topological order.
  [[nodiscard]] const std::vector<Node>& nodes() const noexcept { return nodes_; }
  /// The outputs, in the order they were declared.
  [[nodiscard]] const std::vector<Output>& outputs() const noexcept { return outputs_; }
  /// Each bucketed symbol's ladder.
  [[nodiscard]] const std::map<std::string, Ladder, std::less<>>& buckets() const noexcept { return buckets_; }
  /// Every symbol any shape uses, sorted.
  [[nodiscard]] const std::vector<std::string>& symbols() const noexcept { return symbols_; }
  /// Inputs (in the order they were declared) and parameters, as node indices.
  [[nodiscard]] const std::vector<std::uint32_t>& inputs() const noexcept { return inputs_; }
  /// Where each parameter lies in the weights buffer, in declaration order.
  [[nodiscard]] const std::vector<ParameterSlot>& parameters() const noexcept { return parameters_; }
  /// The size the weights buffer (DType::u8) must have.
  [[nodiscard]] std::uint64_t weight_bytes() const noexcept { return weight_bytes_; }
  /// The parameter of that name, or null.
  [[nodiscard]] const ParameterSlot* parameter(std::string_view name) const noexcept;

  /// The canonical encoding: equal graphs (same ops, shapes, names, buckets) have equal bytes in every process.
  [[nodiscard]] const std::vector<std::byte>& encoding() const noexcept { return encoding_; }
  /// Decodes (and validates again) an encoding from outside.
  static Result<std::shared_ptr<const Graph>> decode(std::span<const std::byte> bytes);

 private:
  friend class GraphBuilder;
  Graph() = default;
  Status finish();  ///< validates, lays out parameters, encodes

  std::vector<TensorInfo> tensors_;
  std::vector<Node> nodes_;
  std::vector<Output> outputs_;
  std::map<std::string, Ladder, std::less<>> buckets_;
  std::vector<std::string> symbols_;  ///< every symbol any shape uses, sorted
  std::vector<std::uint32_t> inputs_;
  std::vector<ParameterSlot> parameters_;
  std::uint64_t weight_bytes_ = 0;
  std::vector<std::byte> encoding_;
};

/// A handle to a tensor of the graph being built.
struct Tensor {
  std::uint32_t id = Node::kNone;  ///< index of the tensor in the graph under construction
};

/// The options of GraphBuilder::matmul.
struct MatmulOptions {
  bool transpose_b = false;                      ///< w is [N, K] (a Linear layer's weight), used transposed
  std::optional<Tensor> bias;                    ///< [N], added to each row before the activation
  Activation activation = Activation::identity;  ///< applied after the bias
  /// [rows, N] of x's dtype, added to the product last (a pre-norm block's residual stream): one pass over the
  /// output fewer than a binary add after it. Only with the identity activation.
  std::optional<Tensor> residual;
};

/// The options of GraphBuilder::attention.
struct AttentionOptions {
  std::optional<float> scale;  ///< the factor of q k^T; 1 / sqrt(head_dim) when not given
  std::int32_t kv_heads = 0;   ///< k and v's heads (grouped-query attention); 0: as many as q's
  bool causal = false;         ///< each query attends to the keys up to its own position in its sequence only
  /// > 0: query i attends only to the keys j of its sequence with |i - j| <= window (sliding-window attention,
  /// symmetric; with causal, j in [i - window, i]); 0: every key.
  std::int32_t window = 0;
};

/// The options of GraphBuilder::rope.
struct RopeOptions {
  /// 0: x is [R, heads * head_dim], every head rotated. > 0: x is q, k and v packed as attention_packed takes them,
  /// [R, (heads + 2 kv_heads) * head_dim]: q's and k's heads rotated, v's copied, so that one projection feeds
  /// attention_packed through one rope.
  std::int32_t kv_heads = 0;
  /// gamma [head_dim]: each of q's heads (every head when not packed) RMS-normalised before its rotation (Qwen3's
  /// q_norm): its values times 1 / sqrt(mean of their squares + eps), rounded to x's type, times gamma.
  std::optional<Tensor> query_norm;
  /// gamma [head_dim]: k's heads likewise (Qwen3's k_norm); packed only, and with query_norm.
  std::optional<Tensor> key_norm;
  float eps = 0.0f;  ///< of the norms; positive where they are given
};

/// The widest head GraphBuilder::rope takes packed or normalised.
inline constexpr std::int64_t kMaxNormedRopeHeadDim = 256;

/// The longest sequence attention takes (GraphBuilder::attention's max_length).
inline constexpr std::int32_t kMaxAttentionLength = 131072;

/// Adds ops one by one, inferring shapes; build() gives the Graph or the first error.
class GraphBuilder {
 public:
  GraphBuilder() : graph_(new Graph()) {}

  /// Executables are made per rung of `ladder` for `symbol` instead of per value.
  GraphBuilder& bucket(std::string symbol, Ladder ladder);

  /// A run-time input, bound by `name`; `padding` fills the rows beyond its real extent.
  Tensor input(std::string name, DType dtype, Shape shape, Padding padding = Padding::zero);
  Tensor parameter(std::string name, DType dtype, Shape shape);  ///< constant dims only
  /// The rows of `table` at `indices` (OpKind::gather).
  Tensor gather(Tensor table, Tensor indices);
  /// Each row's index within its sequence, for `rows` rows of the sequences that `offsets` delimits.
  Tensor sequence_positions(Tensor offsets, Dim rows);
  /// x times w, plus the optional bias, then the activation, plus the optional residual (OpKind::matmul; node inputs
  /// x, w, bias or Node::kNone, and residual where there is one).
  Tensor matmul(Tensor x, Tensor w, MatmulOptions options = {});
  /// The activation of each element.
  Tensor unary(Activation activation, Tensor x);
  /// `activation(a) op b` elementwise; b has a's shape or is one row broadcast over a's rows. A gated MLP's
  /// `silu(gate) * up` is one pass this way, not an activation pass and a product.
  Tensor binary(BinaryOp op, Tensor a, Tensor b, Activation a_activation = Activation::identity);
  /// `activation(x[:, :W]) * x[:, W:]` of x [R, 2 W]: a gated MLP whose two projections are one matmul of twice the
  /// width (their weights' rows stacked) gates in one pass over its output. With GateLayout::groups_of_8 (the
  /// weights' rows interleaved by 8, W a multiple of 8) a GPU computes the matmul and this op as one product that
  /// never writes x, where the two fit (f16/bf16, no bias, identity activation, sm_90).
  Tensor gated(Tensor x, Activation activation, GateLayout layout = GateLayout::halves);
  /// (x + residual) normalised over the last dim, times gamma, plus beta.
  Tensor layer_norm(Tensor x, Tensor gamma, std::optional<Tensor> beta, float eps,
                    std::optional<Tensor> residual = std::nullopt);
  /// (x + residual) divided by its root mean square over the last dim, times gamma.
  Tensor rms_norm(Tensor x, Tensor gamma, float eps, std::optional<Tensor> residual = std::nullopt);
  /// q [R, heads * head_dim], k and v [R, kv_heads * head_dim] (row-major), offsets i32 [S + 1]; every sequence
  /// at most max_length tokens (at most kMaxAttentionLength).
  Tensor attention(Tensor q, Tensor k, Tensor v, Tensor offsets, std::int32_t heads, std::int32_t max_length,
                   AttentionOptions options = {});
  /// attention() over q, k and v packed as column blocks of one tensor: qkv [R, (heads + 2 kv_heads) * head_dim],
  /// q's heads, then k's, then v's (one projection's output, so q, k and v cost one matmul); the op's k and v
  /// inputs are absent (Node::kNone). Gives [R, heads * head_dim].
  Tensor attention_packed(Tensor qkv, Tensor offsets, std::int32_t heads, std::int32_t max_length,
                          AttentionOptions options = {});
  /// Rotary position embedding of x [R, heads * head_dim] at positions i32 [R] (rotate-half pairs, frequencies
  /// 1 / theta^(2i / head_dim)); packed q|k|v and per-head norms before it as RopeOptions says (those forms take head
  /// dims of at most 256). Node inputs: x, positions, query_norm, key_norm (absent: Node::kNone).
  Tensor rope(Tensor x, Tensor positions, std::int32_t heads, float theta, RopeOptions options = {});
  /// Each sequence's rows of x pooled into one row (an empty sequence gives zeros).
  Tensor pool(Tensor x, Tensor offsets, PoolMode mode);
  /// Each row divided by max(its L2 norm, eps).
  Tensor l2_normalize(Tensor x, float eps = 1e-12f);
  /// A view of x with another shape of the same element count.
  Tensor reshape(Tensor x, Shape shape);
  /// x with its dims in the order `permutation` gives.
  Tensor transpose(Tensor x, std::vector<std::int32_t> permutation);
  /// The range [begin, end) of x along `axis`.
  Tensor slice(Tensor x, std::int32_t axis, std::int64_t begin, std::int64_t end);
  /// x converted to `dtype`.
  Tensor cast(Tensor x, DType dtype);
  /// Makes x a graph output, bound by `name`.
  void output(std::string name, Tensor x);

  /// The graph, or the first error met while building it.
  Result<std::shared_ptr<const Graph>> build();

 private:
  Tensor add(Node node, TensorInfo result);
  const TensorInfo* info(Tensor t, std::string_view op, std::string_view role);
  void fail(Status status);

  std::shared_ptr<Graph> graph_;
  Status error_;
};

}  // namespace accel::graph

// accel.GraphBuilder: adds ops one by one, inferring shapes; build() gives the accel.Graph or raises the first error
// met (include/accel/graph/graph.hpp). Each method mirrors the C++ builder's, its options as keyword arguments.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "python/graphs.hpp"

namespace accel::python {

namespace {

using graph::GraphBuilder;
using graph::Tensor;

template <class E>
E option(nb::handle value, std::string_view op, std::string_view name) {
  return enum_from_python<E>(value, fmt::format("GraphBuilder.{}", op), name);
}

graph::AttentionOptions attention_options(std::optional<float> scale, std::int32_t kv_heads, bool causal,
                                          std::int32_t window) {
  return {.scale = scale, .kv_heads = kv_heads, .causal = causal, .window = window};
}

std::vector<std::int64_t> rungs_of(const graph::Ladder& ladder) { return ladder.rungs; }

}  // namespace

void bind_graph_builder(nb::module_& module) {
  using nb::arg;
  nb::class_<GraphBuilder>(module, "GraphBuilder",
                           "Builds an accel.Graph op by op (accel::graph::GraphBuilder); shapes are inferred as ops "
                           "are added, and build() raises the first error, naming the op.")
      .def(nb::init<>())
      .def_static(
          "powers_of_two",
          [](std::int64_t min, std::int64_t max) { return rungs_of(graph::Ladder::powers_of_two(min, max)); },
          arg("min"), arg("max"), "The rungs min, 2 min, 4 min, ... up to and including max.")
      .def_static(
          "arithmetic",
          [](std::int64_t step, std::int64_t max) { return rungs_of(graph::Ladder::arithmetic(step, max)); },
          arg("step"), arg("max"), "The rungs step, 2 step, 3 step, ... up to max.")
      .def(
          "bucket",
          [](GraphBuilder& b, std::string symbol, std::vector<std::int64_t> rungs) {
            b.bucket(std::move(symbol), graph::Ladder::explicit_rungs(std::move(rungs)));
          },
          arg("symbol"), arg("rungs"),
          "Executables are made per rung (ascending ints) of `symbol` instead of per value.")
      .def(
          "input",
          [](GraphBuilder& b, std::string name, nb::handle dtype, nb::handle shape, nb::handle padding) {
            return b.input(std::move(name), dtype_from_python(dtype), shape_of(shape, "input"),
                           option<graph::Padding>(padding, "input", "padding"));
          },
          arg("name"), arg("dtype"), arg("shape"), arg("padding") = "zero",
          "A run-time input bound by `name`; `padding` fills the rows beyond its real extent up to its bucket.")
      .def(
          "parameter",
          [](GraphBuilder& b, std::string name, nb::handle dtype, nb::handle shape) {
            return b.parameter(std::move(name), dtype_from_python(dtype), shape_of(shape, "parameter"));
          },
          arg("name"), arg("dtype"), arg("shape"), "A constant tensor in the weights buffer (constant dims only).")
      .def("gather", &GraphBuilder::gather, arg("table"), arg("indices"), "The rows of `table` at `indices`.")
      .def(
          "sequence_positions",
          [](GraphBuilder& b, Tensor offsets, nb::handle rows) {
            return b.sequence_positions(offsets, dim_of(rows, "sequence_positions"));
          },
          arg("offsets"), arg("rows"), "Each row's index within its sequence.")
      .def(
          "matmul",
          [](GraphBuilder& b, Tensor x, Tensor w, bool transpose_b, std::optional<Tensor> bias, nb::handle activation,
             std::optional<Tensor> residual) {
            return b.matmul(x, w,
                            {.transpose_b = transpose_b,
                             .bias = bias,
                             .activation = option<Activation>(activation, "matmul", "activation"),
                             .residual = residual});
          },
          arg("x"), arg("w"), nb::kw_only(), arg("transpose_b") = false, arg("bias") = nb::none(),
          arg("activation") = "identity", arg("residual") = nb::none(),
          "x @ w (w [N, K] used transposed with transpose_b), + bias, activation, + residual (identity activation "
          "only).")
      .def(
          "unary",
          [](GraphBuilder& b, nb::handle activation, Tensor x) {
            return b.unary(option<Activation>(activation, "unary", "activation"), x);
          },
          arg("activation"), arg("x"), "The activation of each element.")
      .def(
          "binary",
          [](GraphBuilder& b, nb::handle op, Tensor a, Tensor c, nb::handle a_activation) {
            return b.binary(option<graph::BinaryOp>(op, "binary", "op"), a, c,
                            option<Activation>(a_activation, "binary", "a_activation"));
          },
          arg("op"), arg("a"), arg("b"), nb::kw_only(), arg("a_activation") = "identity",
          "a_activation(a) op b elementwise; b a's shape or one row broadcast over a's rows.")
      .def("layer_norm", &GraphBuilder::layer_norm, arg("x"), arg("gamma"), arg("beta").none(), arg("eps"),
           arg("residual").none() = nb::none(), "(x + residual) normalised over the last dim, * gamma + beta.")
      .def("rms_norm", &GraphBuilder::rms_norm, arg("x"), arg("gamma"), arg("eps"), arg("residual").none() = nb::none(),
           "(x + residual) / its root mean square over the last dim * gamma.")
      .def(
          "attention",
          [](GraphBuilder& b, Tensor q, Tensor k, Tensor v, Tensor offsets, std::int32_t heads, std::int32_t max_length,
             std::optional<float> scale, std::int32_t kv_heads, bool causal, std::int32_t window) {
            return b.attention(q, k, v, offsets, heads, max_length, attention_options(scale, kv_heads, causal, window));
          },
          arg("q"), arg("k"), arg("v"), arg("offsets"), arg("heads"), arg("max_length"), nb::kw_only(),
          arg("scale") = nb::none(), arg("kv_heads") = 0, arg("causal") = false, arg("window") = 0,
          "softmax(scale q kᵀ) v per packed sequence (offsets i32 [S + 1]) and head.")
      .def(
          "attention_packed",
          [](GraphBuilder& b, Tensor qkv, Tensor offsets, std::int32_t heads, std::int32_t max_length,
             std::optional<float> scale, std::int32_t kv_heads, bool causal, std::int32_t window) {
            return b.attention_packed(qkv, offsets, heads, max_length,
                                      attention_options(scale, kv_heads, causal, window));
          },
          arg("qkv"), arg("offsets"), arg("heads"), arg("max_length"), nb::kw_only(), arg("scale") = nb::none(),
          arg("kv_heads") = 0, arg("causal") = false, arg("window") = 0,
          "attention() over q, k and v packed as column blocks of one tensor.")
      .def(
          "rope",
          [](GraphBuilder& b, Tensor x, Tensor positions, std::int32_t heads, float theta, std::int32_t kv_heads,
             std::optional<Tensor> query_norm, std::optional<Tensor> key_norm, float eps) {
            return b.rope(x, positions, heads, theta,
                          {.kv_heads = kv_heads, .query_norm = query_norm, .key_norm = key_norm, .eps = eps});
          },
          arg("x"), arg("positions"), arg("heads"), arg("theta"), nb::kw_only(), arg("kv_heads") = 0,
          arg("query_norm") = nb::none(), arg("key_norm") = nb::none(), arg("eps") = 0.0f,
          "Rotary position embedding of x [R, heads * head_dim] at positions i32 [R]; kv_heads > 0: x is q|k|v packed "
          "(v's heads copied); query_norm/key_norm [head_dim]: each head RMS-normalised first.")
      .def(
          "gated",
          [](GraphBuilder& b, Tensor x, nb::handle activation, nb::handle layout) {
            return b.gated(x, option<Activation>(activation, "gated", "activation"),
                           option<graph::GateLayout>(layout, "gated", "layout"));
          },
          arg("x"), arg("activation"), arg("layout") = "halves",
          "activation(gate) * up of x [R, 2 W]: gates x[:, :W] and ups x[:, W:] (layout 'halves'), or in groups of 8 "
          "columns, gate 8 i + j at 16 i + j and its up 8 on ('groups_of_8', which an H100/H200 fuses with the matmul "
          "before it).")
      .def(
          "pool",
          [](GraphBuilder& b, Tensor x, Tensor offsets, nb::handle mode) {
            return b.pool(x, offsets, option<graph::PoolMode>(mode, "pool", "mode"));
          },
          arg("x"), arg("offsets"), arg("mode") = "mean", "Each sequence's rows of x pooled into one row.")
      .def("l2_normalize", &GraphBuilder::l2_normalize, arg("x"), arg("eps") = 1e-12f,
           "Each row divided by max(its L2 norm, eps).")
      .def(
          "reshape",
          [](GraphBuilder& b, Tensor x, nb::handle shape) { return b.reshape(x, shape_of(shape, "reshape")); },
          arg("x"), arg("shape"), "A view of x with another shape of the same element count.")
      .def("transpose", &GraphBuilder::transpose, arg("x"), arg("permutation"), "x with its dims permuted.")
      .def("slice", &GraphBuilder::slice, arg("x"), arg("axis"), arg("begin"), arg("end"),
           "The range [begin, end) of x along `axis`.")
      .def(
          "cast", [](GraphBuilder& b, Tensor x, nb::handle dtype) { return b.cast(x, dtype_from_python(dtype)); },
          arg("x"), arg("dtype"), "x converted to `dtype`.")
      .def("output", &GraphBuilder::output, arg("name"), arg("x"), "Makes x a graph output bound by `name`.")
      .def(
          "build", [](GraphBuilder& b) { return PyGraph{unwrap(b.build())}; },
          "The accel.Graph, or the first error met while building it (raised).");
}

}  // namespace accel::python

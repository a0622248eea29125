// The GEMM's epilogue as CUTLASS's epilogue visitor tree (EVT): the formula of module_abi.hpp, only the nodes the
// instance asks for, or CUTLASS's built-in linear combination where it asks for none of them.
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "jit/cutlass/render_gemm_parts.hpp"
#include "jit/cutlass/render_parts.hpp"

namespace accel::jit::cutlass {
namespace {

// One node of the tree: a named alias (or an inline type for leaves) and the initializer of its arguments.
struct EvtNode {
  std::string type;               // the type as written where the node is used
  std::string comment;            // what the node computes
  std::string leaf_arguments;     // leaves: their arguments' initializer
  std::vector<EvtNode> children;  // inner nodes: the inputs, in order
  std::string compute_arguments = "{}";
};

void render_arguments(const EvtNode& node, int indent, bool comma, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  const std::string_view separator = comma ? "," : "";
  if (node.children.empty()) {
    out += fmt::format("{}{}{}  // {}\n", pad, node.leaf_arguments, separator, node.comment);
    return;
  }
  out += fmt::format("{}{{  // {}\n", pad, node.comment);
  for (const EvtNode& child : node.children) render_arguments(child, indent + 2, true, out);
  out += fmt::format("{}  {}   // the node's own operation\n", pad, node.compute_arguments);
  out += fmt::format("{}}}{}\n", pad, separator);
}

std::string_view activation_functor(Activation activation) {
  switch (activation) {
    case Activation::relu: return "cutlass::epilogue::thread::ReLu";
    case Activation::gelu_tanh: return "cutlass::epilogue::thread::GELU_taylor";
    case Activation::silu: return "cutlass::epilogue::thread::SiLu";
    case Activation::identity:
    case Activation::gelu_erf:
    case Activation::sigmoid:
    case Activation::tanh:
    case Activation::log1p_relu: break;  // identity has no node; check_cutlass_gemm refuses the others
  }
  return "";
}

bool plain_linear_combination(const EpilogueSpec& e) {
  return e.activation == Activation::identity && e.bias == BiasKind::none && !e.row_scale && !e.col_scale &&
         !e.residual;
}

std::string formula(const EpilogueSpec& e) {
  std::string inner = "alpha * acc";
  if (e.row_scale) inner += " * row_scale[m]";
  if (e.col_scale) inner += " * col_scale[n]";
  if (e.source) inner += " + beta * C";
  if (e.bias == BiasKind::per_row) inner += " + bias[m]";
  if (e.bias == BiasKind::per_column) inner += " + bias[n]";
  std::string out =
      e.activation == Activation::identity ? inner : fmt::format("{}({})", to_string(e.activation), inner);
  if (e.residual) out += " + residual";
  return "D = " + out;
}

}  // namespace

RenderedEpilogue render_gemm_epilogue(const GemmInstance& instance) {
  const EpilogueSpec& e = instance.epilogue;
  RenderedEpilogue out;
  if (plain_linear_combination(e)) {
    if (e.source) {
      out.aliases =
          "// Epilogue: D = alpha * acc + beta * C (CUTLASS's linear combination; skips reading C when beta is 0).\n"
          "using EpilogueOp = cutlass::epilogue::fusion::LinearCombination<\n"
          "    ElementD, ElementCompute, ElementC, ElementScalar, RoundStyle>;\n";
      out.arguments_body =
          "  EpilogueArguments arguments{};\n"
          "  arguments.alpha = args.alpha;\n"
          "  arguments.beta = args.beta;\n"
          "  return arguments;\n";
    } else {
      out.aliases =
          "// Epilogue: D = alpha * acc (CUTLASS's scaled accumulator; no C).\n"
          "using EpilogueOp = cutlass::epilogue::fusion::ScaledAcc<ElementD, ElementCompute, ElementScalar, "
          "RoundStyle>;\n";
      out.arguments_body =
          "  EpilogueArguments arguments{};\n"
          "  arguments.alpha = args.alpha;\n"
          "  return arguments;\n";
    }
    return out;
  }

  std::string& a = out.aliases;
  a += fmt::format("// Epilogue visitor tree: {}\n", formula(e));
  a += "namespace fusion = cutlass::epilogue::fusion;\n";
  a += "template <template <class> class Op, class Output = ElementCompute>\n"
       "using Compute = fusion::Sm90Compute<Op, Output, ElementCompute, RoundStyle>;\n";
  if (e.residual) {
    a += "// The residual is read like C (TMA, the same pipeline), so its node takes the epilogue's tiling.\n"
         "using EpilogueDescriptor = cutlass::epilogue::collective::detail::EpilogueDescriptor<\n"
         "    TileShape, EpilogueTileType, ElementC, ElementD, EpilogueSchedule>;\n"
         "using ResidualDescriptor =\n"
         "    cutlass::epilogue::collective::detail::AuxLoadDescriptor<EpilogueDescriptor, LayoutD, ElementD>;\n";
  }
  a += "\n// Leaves\n";
  a += "using Alpha = fusion::Sm90ScalarBroadcast<ElementScalar>;\n";
  if (e.source) a += "using Beta = fusion::Sm90ScalarBroadcast<ElementScalar>;\n";
  if (e.row_scale)
    a += "using RowScale = fusion::Sm90ColBroadcast<0, TileShape, float, ElementCompute, Stride<_1, _0, int64_t>>;"
         "  // one per row\n";
  if (e.col_scale)
    a += "using ColScale = fusion::Sm90RowBroadcast<0, TileShape, float, ElementCompute, Stride<_0, _1, int64_t>>;"
         "  // one per column\n";
  if (e.bias == BiasKind::per_row)
    a += "using Bias = fusion::Sm90ColBroadcast<0, TileShape, ElementD, ElementCompute, Stride<_1, _0, int64_t>>;"
         "  // one per row\n";
  if (e.bias == BiasKind::per_column)
    a += "using Bias = fusion::Sm90RowBroadcast<0, TileShape, ElementD, ElementCompute, Stride<_0, _1, int64_t>>;"
         "  // one per column\n";
  if (e.residual)
    a += "using Residual = fusion::Sm90AuxLoad<\n"
         "    ResidualDescriptor::Stages, typename EpilogueDescriptor::EpilogueTile, ElementD,\n"
         "    typename ResidualDescriptor::Stride, typename ResidualDescriptor::SmemLayoutAtom,\n"
         "    typename ResidualDescriptor::CopyOpS2R>;  // m x n, D's layout\n";

  // The chain, innermost first; the last node writes ElementD.
  struct Step {
    std::string name;
    std::string op;               // the Compute functor
    std::vector<EvtNode> inputs;  // with the previous node spliced in where `previous_at` says
    int previous_at;
    std::string comment;
  };
  const EvtNode alpha{.type = "Alpha", .comment = "alpha", .leaf_arguments = "{{args.alpha}}", .children = {}};
  const EvtNode acc{.type = "fusion::Sm90AccFetch", .comment = "acc", .leaf_arguments = "{}", .children = {}};
  std::vector<Step> steps;
  steps.push_back({"AlphaAcc", "cutlass::multiplies", {alpha, acc}, -1, "alpha * acc"});
  if (e.row_scale)
    steps.push_back({"RowScaled",
                     "cutlass::multiplies",
                     {EvtNode{.type = "RowScale", .comment = "row_scale[m]", .leaf_arguments = "{args.row_scale}"}},
                     0,
                     "... * row_scale[m]"});
  if (e.col_scale)
    steps.push_back({"ColScaled",
                     "cutlass::multiplies",
                     {EvtNode{.type = "ColScale", .comment = "col_scale[n]", .leaf_arguments = "{args.col_scale}"}},
                     0,
                     "... * col_scale[n]"});
  if (e.source)
    steps.push_back({"WithSource",
                     "cutlass::homogeneous_multiply_add",
                     {EvtNode{.type = "Beta", .comment = "beta", .leaf_arguments = "{{args.beta}}"},
                      EvtNode{.type = "fusion::Sm90SrcFetch<ElementC>", .comment = "C", .leaf_arguments = "{}"}},
                     2,
                     "beta * C + ... (C is not read when beta is 0)"});
  if (e.bias != BiasKind::none)
    steps.push_back({"WithBias",
                     "cutlass::plus",
                     {EvtNode{.type = "Bias",
                              .comment = e.bias == BiasKind::per_row ? "bias[m]" : "bias[n]",
                              .leaf_arguments = "{static_cast<ElementD const*>(args.bias)}"}},
                     0,
                     "... + bias"});
  if (e.activation != Activation::identity)
    steps.push_back({"Activated",
                     std::string(activation_functor(e.activation)),
                     {},
                     0,
                     fmt::format("{}(...)", to_string(e.activation))});
  if (e.residual)
    steps.push_back(
        {"WithResidual",
         "cutlass::plus",
         {EvtNode{.type = "Residual",
                  .comment = "residual",
                  .leaf_arguments = "{static_cast<ElementD const*>(args.residual), ElementD(0), stride_d}"}},
         0,
         "... + residual"});

  a += "\n// Nodes, innermost first: Sm90EVT<operation, inputs...>\n";
  EvtNode previous;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Step& step = steps[i];
    const bool root = i + 1 == steps.size();
    std::vector<EvtNode> inputs = step.inputs;
    if (step.previous_at >= 0) inputs.insert(inputs.begin() + step.previous_at, previous);
    std::string input_types;
    for (const EvtNode& input : inputs) input_types += ", " + input.type;
    a += fmt::format("using {} = fusion::Sm90EVT<Compute<{}{}>{}>;  // {}\n", step.name, step.op,
                     root ? ", ElementD" : "", input_types, step.comment);
    previous = EvtNode{.type = step.name, .comment = step.comment, .leaf_arguments = "", .children = inputs};
  }
  a += fmt::format("using EpilogueOp = {};\n", steps.back().name);

  std::string& body = out.arguments_body;
  body += "  return\n";
  render_arguments(previous, 4, false, body);
  body.insert(body.size() - 1, ";");
  return out;
}

}  // namespace accel::jit::cutlass

#include "accel/dnn/nodes.hpp"

namespace accel::dnn {

bool is_binary(PointwiseMode mode) noexcept {
  switch (mode) {
    case PointwiseMode::add:
    case PointwiseMode::sub:
    case PointwiseMode::mul:
    case PointwiseMode::div:
    case PointwiseMode::min:
    case PointwiseMode::max: return true;
    default: return false;
  }
}

std::string_view to_string(PointwiseMode mode) noexcept {
  switch (mode) {
    case PointwiseMode::add: return "add";
    case PointwiseMode::sub: return "sub";
    case PointwiseMode::mul: return "mul";
    case PointwiseMode::div: return "div";
    case PointwiseMode::min: return "min";
    case PointwiseMode::max: return "max";
    case PointwiseMode::relu: return "relu";
    case PointwiseMode::sigmoid: return "sigmoid";
    case PointwiseMode::tanh: return "tanh";
    case PointwiseMode::gelu: return "gelu";
    case PointwiseMode::gelu_approx_tanh: return "gelu_approx_tanh";
    case PointwiseMode::swish: return "swish";
    case PointwiseMode::elu: return "elu";
    case PointwiseMode::softplus: return "softplus";
    case PointwiseMode::identity: return "identity";
    case PointwiseMode::sqrt: return "sqrt";
    case PointwiseMode::rsqrt: return "rsqrt";
    case PointwiseMode::exp: return "exp";
    case PointwiseMode::log: return "log";
    case PointwiseMode::neg: return "neg";
    case PointwiseMode::abs: return "abs";
  }
  return "?";
}

std::string_view to_string(ReductionMode mode) noexcept {
  switch (mode) {
    case ReductionMode::add: return "add";
    case ReductionMode::mul: return "mul";
    case ReductionMode::min: return "min";
    case ReductionMode::max: return "max";
    case ReductionMode::mean: return "mean";
    case ReductionMode::norm1: return "norm1";
    case ReductionMode::norm2: return "norm2";
  }
  return "?";
}

std::string_view to_string(PoolingMode mode) noexcept {
  switch (mode) {
    case PoolingMode::max: return "max";
    case PoolingMode::average_include_padding: return "average_include_padding";
    case PoolingMode::average_exclude_padding: return "average_exclude_padding";
  }
  return "?";
}

std::string_view node_name(const Node& node) noexcept {
  struct Namer {
    std::string_view operator()(const ConvolutionNode& n) const noexcept {
      switch (n.direction) {
        case ConvDirection::forward: return "conv_forward";
        case ConvDirection::backward_data: return "conv_backward_data";
        case ConvDirection::backward_filter: return "conv_backward_filter";
      }
      return "conv";
    }
    std::string_view operator()(const PointwiseNode& n) const noexcept { return to_string(n.mode); }
    std::string_view operator()(const MatmulNode&) const noexcept { return "matmul"; }
    std::string_view operator()(const BatchNormNode& n) const noexcept {
      return n.training ? "batch_norm_training" : "batch_norm_inference";
    }
    std::string_view operator()(const NormNode& n) const noexcept {
      return n.kind == NormKind::layer ? "layer_norm" : "rms_norm";
    }
    std::string_view operator()(const ReductionNode&) const noexcept { return "reduction"; }
    std::string_view operator()(const ReshapeNode&) const noexcept { return "reshape"; }
    std::string_view operator()(const PoolingNode&) const noexcept { return "pooling"; }
    std::string_view operator()(const AttentionNode&) const noexcept { return "attention"; }
  };
  return std::visit(Namer{}, node);
}

}  // namespace accel::dnn

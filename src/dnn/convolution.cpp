#include "accel/dnn/convolution.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace accel {

namespace dnn {
namespace {

enum : std::uint32_t { kX = 1, kW = 2, kY = 3, kBias = 4 };

// The pointwise node of an activation; check_conv_epilogue admits no other (swish's default beta is 1: silu).
std::optional<PointwiseMode> activation_of(Activation activation) {
  switch (activation) {
    case Activation::relu: return PointwiseMode::relu;
    case Activation::sigmoid: return PointwiseMode::sigmoid;
    case Activation::tanh: return PointwiseMode::tanh;
    case Activation::gelu_erf: return PointwiseMode::gelu;
    case Activation::silu: return PointwiseMode::swish;
    case Activation::identity:
    case Activation::gelu_tanh:
    case Activation::log1p_relu: break;
  }
  return std::nullopt;
}

// What the fused engines take (convolution.hpp): conv + bias, then one activation. gelu_tanh and an
// activation without a bias were never part of ConvFwd's vocabulary, so no engine has been checked with them.
Status check_conv_epilogue(const Epilogue& epilogue) {
  ACCEL_RETURN_IF_ERROR(check_fusable("ConvFwd", epilogue,
                                      {Activation::identity, Activation::relu, Activation::sigmoid, Activation::tanh,
                                       Activation::gelu_erf, Activation::silu},
                                      {BiasVector::none, BiasVector::per_channel}));
  if (epilogue.activation != Activation::identity && !epilogue.has_bias()) {
    return not_supported(
        fmt::format("ConvFwd fuses the activation {} only after a per_channel bias", to_string(epilogue.activation)));
  }
  return Status();
}

TensorDesc make_tensor(std::uint32_t uid, DType dtype, std::vector<std::int64_t> dims, const ConvShape& shape,
                       const std::array<std::int64_t, 5>& strides) {
  TensorDesc t{.uid = uid, .dtype = dtype, .rank = static_cast<std::uint8_t>(dims.size())};
  std::copy(dims.begin(), dims.end(), t.dims.begin());
  if (shape.strided) {
    std::copy(strides.begin(), strides.begin() + dims.size(), t.strides.begin());
  } else {
    t.strides = packed_strides(dims, shape.layout);
  }
  return t;
}

ConvolutionNode conv_node(const ConvShape& shape, ConvDirection direction, std::uint32_t a, std::uint32_t b,
                          std::uint32_t out) {
  ConvolutionNode node{.direction = direction, .spatial_rank = shape.spatial_rank, .a = a, .b = b, .out = out};
  for (std::size_t i = 0; i < 3; ++i) {
    node.pre_padding[i] = shape.pre_padding[i];
    node.post_padding[i] = shape.post_padding[i];
    node.stride[i] = shape.stride[i];
    node.dilation[i] = shape.dilation[i];
  }
  return node;
}

std::vector<TensorBinding> bindings(std::initializer_list<TensorBinding> list) {
  std::vector<TensorBinding> out;
  for (const TensorBinding& b : list)
    if (!b.buffer.is_null() || b.uid != kBias) out.push_back(b);
  return out;
}

}  // namespace

Status validate(const ConvShape& shape) {
  const std::size_t r = shape.spatial_rank;
  if (r < 1 || r > 3) return invalid_argument(fmt::format("ConvShape: spatial_rank {} is outside 1..3", r));
  if (shape.n < 1 || shape.c < 1 || shape.k < 1 || shape.groups < 1) {
    return invalid_argument(
        fmt::format("ConvShape: n {}, c {}, k {} and groups {} must be >= 1", shape.n, shape.c, shape.k, shape.groups));
  }
  if (shape.c % shape.groups != 0 || shape.k % shape.groups != 0) {
    return invalid_argument(
        fmt::format("ConvShape: {} groups must divide c ({}) and k ({})", shape.groups, shape.c, shape.k));
  }
  if (shape.dtype != DType::f32 && shape.dtype != DType::f16 && shape.dtype != DType::bf16 &&
      shape.dtype != DType::f64) {
    return not_supported(
        fmt::format("ConvShape: convolutions take f32, f64, f16 or bf16, not {}", accel::to_string(shape.dtype)));
  }
  return conv_output_extents(shape).status();
}

Result<std::array<std::int64_t, 3>> conv_output_extents(const ConvShape& shape) {
  std::array<std::int64_t, 3> out{1, 1, 1};
  for (std::size_t i = 0; i < shape.spatial_rank && i < 3; ++i) {
    // Checked here, not only by validate(): CutlassConv's extents come straight from this (a filter of 0 or less made
    // the span negative and `padded - span` overflow; found by fuzz/wire_request_fuzzer).
    if (shape.input[i] < 1 || shape.filter[i] < 1) {
      return invalid_argument(fmt::format("ConvShape: spatial dim {}: input {} and filter {} must be >= 1", i,
                                          shape.input[i], shape.filter[i]));
    }
    if (shape.stride[i] < 1 || shape.dilation[i] < 1 || shape.pre_padding[i] < 0 || shape.post_padding[i] < 0) {
      return invalid_argument(
          fmt::format("ConvShape: spatial dim {}: stride {} and dilation {} must be >= 1, padding {}/{} >= 0", i,
                      shape.stride[i], shape.dilation[i], shape.pre_padding[i], shape.post_padding[i]));
    }
    // Nothing bounds the extents yet (the tensors' checks come after), so the arithmetic is checked.
    std::int64_t span = 0, padded = 0;
    if (__builtin_mul_overflow(std::int64_t{shape.dilation[i]}, shape.filter[i] - 1, &span) ||
        __builtin_add_overflow(span, 1, &span) ||
        __builtin_add_overflow(shape.input[i], std::int64_t{shape.pre_padding[i]}, &padded) ||
        __builtin_add_overflow(padded, std::int64_t{shape.post_padding[i]}, &padded)) {
      return invalid_argument(fmt::format(
          "ConvShape: spatial dim {}: input {}, filter {}, dilation {} or padding {}/{} "
          "overflows",
          i, shape.input[i], shape.filter[i], shape.dilation[i], shape.pre_padding[i], shape.post_padding[i]));
    }
    if (padded < span) {
      return invalid_argument(
          fmt::format("ConvShape: spatial dim {}: the dilated filter ({}) is larger than the "
                      "padded input ({})",
                      i, span, padded));
    }
    out[i] = (padded - span) / shape.stride[i] + 1;
  }
  return out;
}

Result<ConvTensors> conv_tensors(const ConvShape& shape) {
  ACCEL_RETURN_IF_ERROR(validate(shape));
  ACCEL_ASSIGN_OR_RETURN(const auto out, conv_output_extents(shape));
  const std::size_t r = shape.spatial_rank;
  std::vector<std::int64_t> x{shape.n, shape.c}, w{shape.k, shape.c / shape.groups}, y{shape.n, shape.k},
      bias{1, shape.k};
  for (std::size_t i = 0; i < r; ++i) {
    x.push_back(shape.input[i]);
    w.push_back(shape.filter[i]);
    y.push_back(out[i]);
    bias.push_back(1);
  }
  ConvTensors t{.x = make_tensor(kX, shape.dtype, x, shape, shape.x_strides),
                .w = make_tensor(kW, shape.dtype, w, shape, shape.w_strides),
                .y = make_tensor(kY, shape.dtype, y, shape, shape.y_strides),
                .bias = {.uid = kBias, .dtype = shape.dtype, .rank = static_cast<std::uint8_t>(bias.size())}};
  std::copy(bias.begin(), bias.end(), t.bias.dims.begin());
  t.bias.strides = packed_strides(bias, TensorLayout::channels_first);
  ACCEL_RETURN_IF_ERROR(validate(t.x, "x"));
  ACCEL_RETURN_IF_ERROR(validate(t.w, "w"));
  ACCEL_RETURN_IF_ERROR(validate(t.y, "y"));
  return t;
}

Result<std::shared_ptr<const Graph>> graph_of(const ConvFwd& request) {
  ACCEL_RETURN_IF_ERROR(check_conv_epilogue(request.epilogue));
  ACCEL_ASSIGN_OR_RETURN(ConvTensors t, conv_tensors(request.shape));
  if (!request.epilogue.has_bias()) {
    return Graph::create({t.x, t.w, t.y}, {conv_node(request.shape, ConvDirection::forward, kX, kW, kY)});
  }
  // conv -> %5 (virtual) -> add bias -> y, or -> %6 (virtual) -> activation -> y
  TensorDesc conv_out = t.y;
  conv_out.uid = 5;
  conv_out.dtype = DType::f32;
  conv_out.is_virtual = true;
  conv_out.strides = packed_strides(conv_out.shape(), request.shape.layout);
  std::vector<TensorDesc> tensors{t.x, t.w, t.y, t.bias, conv_out};
  std::vector<Node> nodes{conv_node(request.shape, ConvDirection::forward, kX, kW, 5)};
  const std::optional<PointwiseMode> activation = activation_of(request.epilogue.activation);
  if (!activation) {
    nodes.push_back(PointwiseNode{.mode = PointwiseMode::add, .a = 5, .b = kBias, .out = kY});
  } else {
    TensorDesc biased = conv_out;
    biased.uid = 6;
    tensors.push_back(biased);
    nodes.push_back(PointwiseNode{.mode = PointwiseMode::add, .a = 5, .b = kBias, .out = 6});
    nodes.push_back(PointwiseNode{.mode = *activation, .a = 6, .out = kY});
  }
  return Graph::create(std::move(tensors), std::move(nodes));
}

Result<std::shared_ptr<const Graph>> graph_of(const ConvBwdData& request) {
  ACCEL_ASSIGN_OR_RETURN(ConvTensors t, conv_tensors(request.shape));
  // dy takes y's place and dx x's: uids 1 dx, 2 w, 3 dy.
  return Graph::create({t.x, t.w, t.y}, {conv_node(request.shape, ConvDirection::backward_data, kY, kW, kX)});
}

Result<std::shared_ptr<const Graph>> graph_of(const ConvBwdFilter& request) {
  ACCEL_ASSIGN_OR_RETURN(ConvTensors t, conv_tensors(request.shape));
  // uids 1 x, 2 dw, 3 dy.
  return Graph::create({t.x, t.w, t.y}, {conv_node(request.shape, ConvDirection::backward_filter, kX, kY, kW)});
}

std::vector<TensorBinding> bindings_of(const ConvFwd& request) {
  return bindings({{kX, request.x}, {kW, request.w}, {kY, request.y}, {kBias, request.bias}});
}
std::vector<TensorBinding> bindings_of(const ConvBwdData& request) {
  return bindings({{kX, request.dx}, {kW, request.w}, {kY, request.dy}});
}
std::vector<TensorBinding> bindings_of(const ConvBwdFilter& request) {
  return bindings({{kX, request.x}, {kW, request.dw}, {kY, request.dy}});
}

std::string to_string(const ConvShape& shape) {
  const std::size_t r = shape.spatial_rank <= 3 ? shape.spatial_rank : 3;
  return fmt::format(
      "{}-D conv {} {} n={} c={} k={} groups={} input [{}] filter [{}] pad [{}]/[{}] stride [{}] "
      "dilation [{}]",
      shape.spatial_rank, accel::to_string(shape.dtype),
      shape.strided ? std::string_view("strided") : to_string(shape.layout), shape.n, shape.c, shape.k, shape.groups,
      fmt::join(shape.input.begin(), shape.input.begin() + r, ", "),
      fmt::join(shape.filter.begin(), shape.filter.begin() + r, ", "),
      fmt::join(shape.pre_padding.begin(), shape.pre_padding.begin() + r, ", "),
      fmt::join(shape.post_padding.begin(), shape.post_padding.begin() + r, ", "),
      fmt::join(shape.stride.begin(), shape.stride.begin() + r, ", "),
      fmt::join(shape.dilation.begin(), shape.dilation.begin() + r, ", "));
}

}  // namespace dnn
}  // namespace accel

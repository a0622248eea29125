/// @file
/// Convolution requests: forward (with an optional fused bias and activation), backward data, backward
/// filter; 1-, 2- and 3-D; NCHW, NHWC or fully strided; groups, dilation, asymmetric padding.
///
/// @code
///   accel::ConvFwd conv{
///       .shape = {.n = 32, .c = 64, .k = 64, .input = {56, 56}, .filter = {3, 3},
///                 .pre_padding = {1, 1}, .post_padding = {1, 1}, .dtype = DType::f16},
///       .x = x, .w = w, .y = y, .bias = bias,
///       .epilogue = {.activation = accel::Activation::relu, .bias = accel::BiasVector::per_channel}};
///   device.ask(conv).wait();
/// @endcode
///
/// The request is plain data (it crosses to an isolated worker byte for byte). What keys a plan — ConvShape
/// and the epilogue — is apart from the buffers. Tensor dims follow cuDNN: x [N, C, spatial], w [K, C/groups,
/// filter], y [N, K, out spatial], bias [1, K, 1...]; strides give the layout.
///
/// The epilogue (include/accel/core/epilogue.hpp) is what cuDNN's fused engines take: a per_channel bias, then
/// optionally relu, sigmoid, tanh, gelu_erf (cuDNN's GELU is the exact one) or silu. An activation without the
/// bias, gelu_tanh, or a per_row / per_column bias is refused with not_supported.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/epilogue.hpp"
#include "accel/core/result.hpp"
#include "accel/dnn/graph.hpp"

namespace accel {

struct ConvShape {
  std::uint8_t spatial_rank = 2;  ///< 1, 2 or 3
  dnn::TensorLayout layout = dnn::TensorLayout::channels_last;
  bool strided = false;      ///< true: x_strides, w_strides and y_strides say where elements are, not `layout`
  DType dtype = DType::f32;  ///< of x, w, y and bias; accumulation is in f32 (f64 for f64)
  std::int64_t n = 1;
  std::int64_t c = 0;  ///< input channels
  std::int64_t k = 0;  ///< output channels
  std::int64_t groups = 1;
  std::array<std::int64_t, 3> input{};  ///< spatial extents of x
  std::array<std::int64_t, 3> filter{};
  std::array<std::int32_t, 3> pre_padding{};
  std::array<std::int32_t, 3> post_padding{};
  std::array<std::int32_t, 3> stride{1, 1, 1};
  std::array<std::int32_t, 3> dilation{1, 1, 1};
  std::array<std::int64_t, 5> x_strides{};  ///< strided only; in [N, C, spatial] order
  std::array<std::int64_t, 5> w_strides{};
  std::array<std::int64_t, 5> y_strides{};

  friend bool operator==(const ConvShape&, const ConvShape&) noexcept = default;
};

struct ConvFwd {
  static constexpr const char* kName = "ConvFwd";
  using Response = Done;
  ConvShape shape;
  BufferHandle x;
  BufferHandle w;
  BufferHandle y;
  BufferHandle bias;  ///< [1, K, 1...], only with a per_channel bias
  Epilogue epilogue;
};

struct ConvBwdData {
  static constexpr const char* kName = "ConvBwdData";
  using Response = Done;
  ConvShape shape;
  BufferHandle dy;
  BufferHandle w;
  BufferHandle dx;
};

struct ConvBwdFilter {
  static constexpr const char* kName = "ConvBwdFilter";
  using Response = Done;
  ConvShape shape;
  BufferHandle x;
  BufferHandle dy;
  BufferHandle dw;
};

namespace dnn {

/// The spatial extents of y, or invalid_argument naming the dim that does not fit.
[[nodiscard]] Result<std::array<std::int64_t, 3>> conv_output_extents(const ConvShape& shape);
/// Checks the shape (sizes, groups dividing C and K, padding, strides) without any buffers.
[[nodiscard]] Status validate(const ConvShape& shape);

/// The tensor descriptions of a convolution (uids 1 x, 2 w, 3 y, 4 bias), as the graph of each request uses.
struct ConvTensors {
  TensorDesc x, w, y, bias;
};
[[nodiscard]] Result<ConvTensors> conv_tensors(const ConvShape& shape);

/// The graph each request runs: one convolution node, plus add(bias) and the activation for ConvFwd.
[[nodiscard]] Result<std::shared_ptr<const Graph>> graph_of(const ConvFwd& request);
[[nodiscard]] Result<std::shared_ptr<const Graph>> graph_of(const ConvBwdData& request);
[[nodiscard]] Result<std::shared_ptr<const Graph>> graph_of(const ConvBwdFilter& request);

/// The bindings of each request's graph, in uid order.
[[nodiscard]] std::vector<TensorBinding> bindings_of(const ConvFwd& request);
[[nodiscard]] std::vector<TensorBinding> bindings_of(const ConvBwdData& request);
[[nodiscard]] std::vector<TensorBinding> bindings_of(const ConvBwdFilter& request);

[[nodiscard]] std::string to_string(const ConvShape& shape);

}  // namespace dnn
}  // namespace accel

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

/// What keys a convolution's plan: sizes, layout, padding, strides, dilation, dtype (the buffers are apart).
struct ConvShape {
  std::uint8_t spatial_rank = 2;                                ///< 1, 2 or 3
  dnn::TensorLayout layout = dnn::TensorLayout::channels_last;  ///< channels first or last, packed (unless strided)
  bool strided = false;      ///< true: x_strides, w_strides and y_strides say where elements are, not `layout`
  DType dtype = DType::f32;  ///< of x, w, y and bias; accumulation is in f32 (f64 for f64)
  std::int64_t n = 1;        ///< batch size
  std::int64_t c = 0;        ///< input channels
  std::int64_t k = 0;        ///< output channels
  std::int64_t groups = 1;   ///< groups; C and K must be multiples of it
  std::array<std::int64_t, 3> input{};            ///< spatial extents of x
  std::array<std::int64_t, 3> filter{};           ///< spatial extents of the filter
  std::array<std::int32_t, 3> pre_padding{};      ///< padding before each spatial dim
  std::array<std::int32_t, 3> post_padding{};     ///< padding after each spatial dim
  std::array<std::int32_t, 3> stride{1, 1, 1};    ///< step of the filter along each spatial dim
  std::array<std::int32_t, 3> dilation{1, 1, 1};  ///< spacing of the filter's taps along each spatial dim
  std::array<std::int64_t, 5> x_strides{};        ///< strided only; in [N, C, spatial] order
  std::array<std::int64_t, 5> w_strides{};        ///< strided only; in [K, C/groups, filter] order
  std::array<std::int64_t, 5> y_strides{};        ///< strided only; in [N, K, out spatial] order

  /// Equal when every field is.
  friend bool operator==(const ConvShape&, const ConvShape&) noexcept = default;
};

/// The forward convolution y = conv(x, w), with an optional fused bias and activation.
struct ConvFwd {
  static constexpr const char* kName = "ConvFwd";
  using Response = Done;
  ConvShape shape;    ///< the convolution's sizes and layout
  BufferHandle x;     ///< x, read
  BufferHandle w;     ///< w, read
  BufferHandle y;     ///< y, written
  BufferHandle bias;  ///< [1, K, 1...], only with a per_channel bias
  Epilogue epilogue;  ///< the fused bias and activation (see the file's description)
};

/// The data gradient: dx from dy and w.
struct ConvBwdData {
  static constexpr const char* kName = "ConvBwdData";
  using Response = Done;
  ConvShape shape;  ///< the convolution's sizes and layout
  BufferHandle dy;  ///< dy, read
  BufferHandle w;   ///< w, read
  BufferHandle dx;  ///< dx, written
};

/// The filter gradient: dw from x and dy.
struct ConvBwdFilter {
  static constexpr const char* kName = "ConvBwdFilter";
  using Response = Done;
  ConvShape shape;  ///< the convolution's sizes and layout
  BufferHandle x;   ///< x, read
  BufferHandle dy;  ///< dy, read
  BufferHandle dw;  ///< dw, written
};

namespace dnn {

/// The spatial extents of y, or invalid_argument naming the dim that does not fit.
[[nodiscard]] Result<std::array<std::int64_t, 3>> conv_output_extents(const ConvShape& shape);
/// Checks the shape (sizes, groups dividing C and K, padding, strides) without any buffers.
[[nodiscard]] Status validate(const ConvShape& shape);

/// The tensor descriptions of a convolution (uids 1 x, 2 w, 3 y, 4 bias), as the graph of each request uses.
struct ConvTensors {
  /// @{
  /// The descriptions of x, w, y and bias (bias only where the request has one).
  TensorDesc x, w, y, bias;
  /// @}
};
/// The descriptions of x, w, y and bias for `shape`, or the error in the shape.
[[nodiscard]] Result<ConvTensors> conv_tensors(const ConvShape& shape);

/// The graph each request runs: one convolution node, plus add(bias) and the activation for ConvFwd.
[[nodiscard]] Result<std::shared_ptr<const Graph>> graph_of(const ConvFwd& request);
/// The graph ConvBwdData runs: one backward-data convolution node.
[[nodiscard]] Result<std::shared_ptr<const Graph>> graph_of(const ConvBwdData& request);
/// The graph ConvBwdFilter runs: one backward-filter convolution node.
[[nodiscard]] Result<std::shared_ptr<const Graph>> graph_of(const ConvBwdFilter& request);

/// The bindings of each request's graph, in uid order.
[[nodiscard]] std::vector<TensorBinding> bindings_of(const ConvFwd& request);
/// The bindings of ConvBwdData's graph, in uid order.
[[nodiscard]] std::vector<TensorBinding> bindings_of(const ConvBwdData& request);
/// The bindings of ConvBwdFilter's graph, in uid order.
[[nodiscard]] std::vector<TensorBinding> bindings_of(const ConvBwdFilter& request);

/// The shape as text, for messages and plan descriptions.
[[nodiscard]] std::string to_string(const ConvShape& shape);

}  // namespace dnn
}  // namespace accel

/// @file
/// The DNN family's entry points: convolutions and operation graphs (accel/dnn/*.hpp; cuDNN on CUDA, the reference
/// interpreter on the CPU), each sent to `device` and answered by its future, as Device::ask would.
///
/// @code
///   accel::dnn::run_graph(device, {.graph = graph, .bindings = {{x.uid, x_buffer}, {y.uid, y_buffer}}}).wait();
/// @endcode
#pragma once

#include "accel/device/device.hpp"
#include "accel/dnn/requests.hpp"

namespace accel::dnn {

/// y = act(conv(x, w) + bias): see accel::ConvFwd.
inline Future<Done> conv_fwd(const Device& device, ConvFwd request) { return device.ask(std::move(request)); }
/// The gradient of a convolution with respect to its input: see accel::ConvBwdData.
inline Future<Done> conv_bwd_data(const Device& device, ConvBwdData request) { return device.ask(std::move(request)); }
/// The gradient of a convolution with respect to its filter: see accel::ConvBwdFilter.
inline Future<Done> conv_bwd_filter(const Device& device, ConvBwdFilter request) {
  return device.ask(std::move(request));
}
/// Runs an operation graph (GraphBuilder's) with its tensors bound to buffers: see accel::RunGraph.
inline Future<Done> run_graph(const Device& device, RunGraph request) { return device.ask(std::move(request)); }

}  // namespace accel::dnn

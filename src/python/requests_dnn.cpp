// The cuDNN family's convolutions (include/accel/dnn/convolution.hpp) as Device methods: conv_fwd, conv_bwd_data,
// conv_bwd_filter, their keyword arguments ConvShape's members and the buffers. The CPU device runs them with its
// double-precision reference; python/accel/dnn.py adds defaults from the buffers' shapes. Graphs: dnn_graph.cpp.
#include "python/conv_fields.hpp"

namespace accel::python {

void bind_dnn_requests(nb::module_& module) {
  auto device = nb::borrow<nb::class_<PyDevice>>(module.attr("Device"));
  bind_request<ConvFwd>(device, "conv_fwd",
                        conv_fields<ConvFwd>({member("x", &ConvFwd::x), member("w", &ConvFwd::w),
                                              member("y", &ConvFwd::y), member("bias", &ConvFwd::bias),
                                              member("activation", &ConvFwd::epilogue, &Epilogue::activation),
                                              member("bias_vector", &ConvFwd::epilogue, &Epilogue::bias)}));
  bind_request<ConvBwdData>(device, "conv_bwd_data",
                            conv_fields<ConvBwdData>({member("dy", &ConvBwdData::dy), member("w", &ConvBwdData::w),
                                                      member("dx", &ConvBwdData::dx)}));
  bind_request<ConvBwdFilter>(
      device, "conv_bwd_filter",
      conv_fields<ConvBwdFilter>(
          {member("x", &ConvBwdFilter::x), member("dy", &ConvBwdFilter::dy), member("dw", &ConvBwdFilter::dw)}));
  export_enums<dnn::TensorLayout>(module);
}

}  // namespace accel::python

// The convolution shape's fields (accel::ConvShape, include/accel/dnn/convolution.hpp) as keyword arguments, shared
// by the cuDNN convolutions (requests_dnn.cpp) and CUTLASS's (requests_jit.cpp), and its layout enum.
#pragma once

#include <vector>

#include "python/request_fields.hpp"

#include "accel/dnn/convolution.hpp"

namespace accel::python {

template <>
struct EnumNames<dnn::TensorLayout> {
  static constexpr const char* python_name = "TensorLayout";
  static constexpr std::array values{std::pair{dnn::TensorLayout::channels_first, "channels_first"},
                                     std::pair{dnn::TensorLayout::channels_last, "channels_last"}};
};

// spatial_rank, layout, strided, dtype, n, c, k, groups, input, filter, pre_padding, post_padding, stride,
// dilation, x_strides, w_strides, y_strides: the members of R::shape, by their own names.
template <class R>
std::vector<Field<R>> conv_shape_fields() {
  using S = ConvShape;
  return {member("spatial_rank", &R::shape, &S::spatial_rank),
          member("layout", &R::shape, &S::layout),
          member("strided", &R::shape, &S::strided),
          member("dtype", &R::shape, &S::dtype),
          member("n", &R::shape, &S::n),
          member("c", &R::shape, &S::c),
          member("k", &R::shape, &S::k),
          member("groups", &R::shape, &S::groups),
          member("input", &R::shape, &S::input),
          member("filter", &R::shape, &S::filter),
          member("pre_padding", &R::shape, &S::pre_padding),
          member("post_padding", &R::shape, &S::post_padding),
          member("stride", &R::shape, &S::stride),
          member("dilation", &R::shape, &S::dilation),
          member("x_strides", &R::shape, &S::x_strides),
          member("w_strides", &R::shape, &S::w_strides),
          member("y_strides", &R::shape, &S::y_strides)};
}

// conv_shape_fields<R>() followed by `more`.
template <class R>
std::vector<Field<R>> conv_fields(std::vector<Field<R>> more) {
  std::vector<Field<R>> fields = conv_shape_fields<R>();
  for (Field<R>& field : more) fields.push_back(std::move(field));
  return fields;
}

}  // namespace accel::python

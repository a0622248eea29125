// Moving a tensor between its storage (its strides and element type, in host memory) and the kernels' dense
// double form.
#pragma once

#include "accel/dnn/tensor.hpp"
#include "dnn/cpu/dense_tensor.hpp"

namespace accel::dnn::cpu {

// Whether results can be stored in `dtype`: floating types only, since nodes.hpp says nothing of how a result
// would round or saturate into an integer.
[[nodiscard]] bool can_store(DType dtype) noexcept;

// `data` holds at least storage_extent(tensor) elements of tensor.dtype.
[[nodiscard]] DenseTensor load(const TensorDesc& tensor, const void* data);
// `values` are in row-major order of tensor's dims; `tensor.dtype` is one can_store accepts.
void store(const TensorDesc& tensor, std::span<const double> values, void* data);

}  // namespace accel::dnn::cpu

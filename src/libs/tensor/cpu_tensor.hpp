// The tensor requests on the CPU: each input gathered, in the compute type (f32, or f64 for f64 data), into the
// packed order the math wants (tensor_gather.hpp); contractions as OpenBLAS GEMMs over [batch, m, k] x [batch, k, n],
// elementwise operations and reductions as Eigen array expressions. Requests arrive validated and resolved (their
// Operation's validate and operands). An empty C view means C is D itself.
#pragma once

#include <vector>

#include "accel/core/library_version.hpp"
#include "accel/libs/tensor/tensor.hpp"
#include "operation/operation.hpp"

namespace accel::tensor {

[[nodiscard]] Status cpu_contract(const Contract& request, const BufferView& a, const BufferView& b,
                                  const BufferView& c, const BufferView& d);
[[nodiscard]] Status cpu_binary(const ElementwiseBinary& request, const BufferView& a, const BufferView& c,
                                const BufferView& d);
[[nodiscard]] Status cpu_trinary(const ElementwiseTrinary& request, const BufferView& a, const BufferView& b,
                                 const BufferView& c, const BufferView& d);
[[nodiscard]] Status cpu_reduce(const Reduce& request, const BufferView& a, const BufferView& c, const BufferView& d);
[[nodiscard]] Status cpu_permute(const Permute& request, const BufferView& a, const BufferView& b);

// OpenBLAS and Eigen, with their versions.
[[nodiscard]] std::vector<LibraryVersion> cpu_tensor_libraries();

}  // namespace accel::tensor

// Moving tensor elements between layouts on the CPU: what the CPU implementation does before and after the math.
#pragma once

#include <vector>

#include "accel/libs/tensor/tensor.hpp"

namespace accel::tensor {

// A tensor's elements as `T` (float or double), packed and row-major over the modes of `target` (whose extents
// agree with the source's): out[i...] = source[the indices of the source's modes among i...]. The target may have
// modes the source lacks, over which the source is broadcast.
template <class T>
void gather(const void* data, DType dtype, const Tensor& source, const Tensor& target, std::vector<T>& out);

// Packed values in the dtype, into `data`.
template <class T>
void store(const std::vector<T>& values, DType dtype, void* data);

// A tensor (without a buffer) of the modes of `from` that `keep` selects, in `from`'s order.
template <class Keep>
Tensor select_modes(const Tensor& from, Keep keep) {
  Tensor out;
  for (std::size_t i = 0; i < from.rank; ++i) {
    if (!keep(from.modes[i])) continue;
    out.modes[out.rank] = from.modes[i];
    out.extents[out.rank] = from.extents[i];
    ++out.rank;
  }
  return out;
}

// `first`'s modes followed by `second`'s (together at most kMaxModes; checked tensors have disjoint mode sets here).
[[nodiscard]] Tensor concat(const Tensor& first, const Tensor& second);

}  // namespace accel::tensor

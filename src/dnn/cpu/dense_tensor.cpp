#include "dnn/cpu/dense_tensor.hpp"

#include <fmt/format.h>

namespace accel::dnn::cpu {

std::int64_t volume(DenseDims dims) noexcept {
  std::int64_t count = 1;
  for (std::int64_t dim : dims) count *= dim;
  return count;
}

std::vector<std::int64_t> row_major_strides(DenseDims dims) {
  std::vector<std::int64_t> strides(dims.size());
  std::int64_t running = 1;
  for (std::size_t i = dims.size(); i-- > 0;) {
    strides[i] = running;
    running *= dims[i];
  }
  return strides;
}

Result<std::vector<std::int64_t>> broadcast_strides(DenseDims dims, DenseDims out_dims) {
  if (dims.size() != out_dims.size()) {
    return invalid_argument(fmt::format("dims [{}] do not broadcast to [{}]: the ranks differ", fmt::join(dims, ", "),
                                        fmt::join(out_dims, ", ")));
  }
  std::vector<std::int64_t> strides = row_major_strides(dims);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == out_dims[i]) continue;
    if (dims[i] != 1) {
      return invalid_argument(fmt::format("dims [{}] do not broadcast to [{}]: dim {} is neither 1 nor {}",
                                          fmt::join(dims, ", "), fmt::join(out_dims, ", "), i, out_dims[i]));
    }
    strides[i] = 0;
  }
  return strides;
}

}  // namespace accel::dnn::cpu

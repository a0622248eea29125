#include "accel/dnn/tensor.hpp"

#include <fmt/format.h>

#include <limits>

namespace accel::dnn {

std::string_view to_string(TensorLayout layout) noexcept {
  switch (layout) {
    case TensorLayout::channels_first: return "channels_first";
    case TensorLayout::channels_last: return "channels_last";
  }
  return "?";
}

Dims packed_strides(std::span<const std::int64_t> dims, TensorLayout layout) noexcept {
  Dims strides{};
  const std::size_t rank = dims.size();
  if (rank == 0) return strides;
  if (layout == TensorLayout::channels_last && rank >= 3) {
    // N outermost, then the spatial dims in order, then C innermost.
    std::int64_t running = 1;
    strides[1] = running;
    running *= dims[1];
    for (std::size_t i = rank; i-- > 2;) {
      strides[i] = running;
      running *= dims[i];
    }
    strides[0] = running;
    return strides;
  }
  std::int64_t running = 1;
  for (std::size_t i = rank; i-- > 0;) {
    strides[i] = running;
    running *= dims[i];
  }
  return strides;
}

std::uint64_t element_count(const TensorDesc& tensor) noexcept {
  std::uint64_t count = 1;
  for (std::int64_t dim : tensor.shape()) count *= static_cast<std::uint64_t>(dim);
  return count;
}

std::uint64_t storage_extent(const TensorDesc& tensor) noexcept {
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < tensor.rank; ++i) {
    if (tensor.dims[i] == 0) return 0;
    last += static_cast<std::uint64_t>(tensor.dims[i] - 1) * static_cast<std::uint64_t>(tensor.strides[i]);
  }
  return last + 1;
}

Status validate(const TensorDesc& tensor, std::string_view role) {
  if (tensor.uid == 0) return invalid_argument(fmt::format("{}: tensor uid 0 is reserved for 'no tensor'", role));
  if (tensor.rank == 0 || tensor.rank > kMaxDims) {
    return invalid_argument(
        fmt::format("{} (uid {}): rank {} is outside 1..{}", role, tensor.uid, tensor.rank, kMaxDims));
  }
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 48;
  std::uint64_t elements = 1;
  std::uint64_t extent = 1;
  for (std::size_t i = 0; i < tensor.rank; ++i) {
    if (tensor.dims[i] <= 0) {
      return invalid_argument(
          fmt::format("{} (uid {}): dim {} is {}; dims must be positive", role, tensor.uid, i, tensor.dims[i]));
    }
    if (tensor.strides[i] < 0 || (tensor.strides[i] == 0 && tensor.dims[i] > 1)) {
      return invalid_argument(fmt::format("{} (uid {}): stride {} is {}; strides must be positive", role, tensor.uid, i,
                                          tensor.strides[i]));
    }
    elements *= static_cast<std::uint64_t>(tensor.dims[i]);
    extent += static_cast<std::uint64_t>(tensor.dims[i] - 1) * static_cast<std::uint64_t>(tensor.strides[i]);
    if (elements > kLimit || extent > kLimit) {
      return invalid_argument(fmt::format("{} (uid {}): more than 2^48 elements", role, tensor.uid));
    }
  }
  if (tensor.alignment == 0 || (tensor.alignment & (tensor.alignment - 1)) != 0) {
    return invalid_argument(
        fmt::format("{} (uid {}): alignment {} is not a power of two", role, tensor.uid, tensor.alignment));
  }
  return Status();
}

std::string to_string(const TensorDesc& tensor) {
  return fmt::format("%{}{} {}[{}] strides [{}]", tensor.uid, tensor.is_virtual ? " (virtual)" : "",
                     accel::to_string(tensor.dtype), fmt::join(tensor.shape(), ", "), fmt::join(tensor.stride(), ", "));
}

}  // namespace accel::dnn

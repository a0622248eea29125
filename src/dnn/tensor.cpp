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

// Callers may ask before the dims are validated (validate refuses more than 2^48 elements, and strides are then
// never used), so the products are taken in unsigned arithmetic: a refused tensor's strides wrap, never overflow.
Dims packed_strides(std::span<const std::int64_t> dims, TensorLayout layout) noexcept {
  Dims strides{};
  const std::size_t rank = dims.size();
  if (rank == 0) return strides;
  std::uint64_t running = 1;
  auto next = [&](std::size_t i) {
    strides[i] = static_cast<std::int64_t>(running);
    running *= static_cast<std::uint64_t>(dims[i]);
  };
  if (layout == TensorLayout::channels_last && rank >= 3) {
    // N outermost, then the spatial dims in order, then C innermost.
    next(1);
    for (std::size_t i = rank; i-- > 2;) next(i);
    next(0);
    return strides;
  }
  for (std::size_t i = rank; i-- > 0;) next(i);
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
  // Checked products: a wrapped count or extent could pass the limit (dims 2^32 + 1 at stride 2^32 would span
  // one element). Every dim before any stride, so that a tensor too large for packed strides is named as such.
  for (std::size_t i = 0; i < tensor.rank; ++i) {
    if (tensor.dims[i] <= 0) {
      return invalid_argument(
          fmt::format("{} (uid {}): dim {} is {}; dims must be positive", role, tensor.uid, i, tensor.dims[i]));
    }
    if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(tensor.dims[i]), &elements) || elements > kLimit) {
      return invalid_argument(fmt::format("{} (uid {}): more than 2^48 elements", role, tensor.uid));
    }
  }
  for (std::size_t i = 0; i < tensor.rank; ++i) {
    if (tensor.strides[i] < 0 || (tensor.strides[i] == 0 && tensor.dims[i] > 1)) {
      return invalid_argument(fmt::format("{} (uid {}): stride {} is {}; strides must be positive", role, tensor.uid, i,
                                          tensor.strides[i]));
    }
    std::uint64_t span = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(tensor.dims[i] - 1),
                               static_cast<std::uint64_t>(tensor.strides[i]), &span) ||
        __builtin_add_overflow(extent, span, &extent) || extent > kLimit) {
      return invalid_argument(fmt::format("{} (uid {}): its strides span more than 2^48 elements", role, tensor.uid));
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

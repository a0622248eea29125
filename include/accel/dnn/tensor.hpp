/// @file
/// Tensors of a cuDNN-style operation graph: plain descriptions (uid, element type, dims, strides), no data.
///
/// Dims are always in logical order — N, C, then the spatial dims for activations and filters (K, C/groups,
/// spatial), or the caller's order for other tensors — and strides say how they are stored. A packed NHWC
/// tensor is dims {N, C, H, W} with strides {H*W*C, 1, W*C, C}: the order of the dims never changes with
/// the layout, only the strides do (as in cuDNN).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "accel/core/dtype.hpp"
#include "accel/core/result.hpp"

namespace accel::dnn {

inline constexpr std::size_t kMaxDims = 8;  ///< The most dims a tensor may have.

/// How a packed tensor's dims are stored. `channels_first` is row-major over the logical order (NCHW, NCDHW,
/// and plain row-major for tensors without channels); `channels_last` moves dim 1 innermost (NHWC, NDHWC).
enum class TensorLayout : std::uint8_t { channels_first, channels_last };

/// The layout's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(TensorLayout layout) noexcept;

using Dims = std::array<std::int64_t, kMaxDims>;  ///< Dims or strides of a tensor; the first `rank` are used.

/// One tensor of a graph: uid, dtype, dims, strides and whether it is virtual.
struct TensorDesc {
  std::uint32_t uid = 0;         ///< unique within a graph; 0 is "no tensor"
  DType dtype = DType::f32;      ///< element type
  std::uint8_t rank = 0;         ///< number of dims used
  bool is_virtual = false;       ///< an intermediate result that never reaches memory
  std::uint16_t alignment = 16;  ///< bytes the bound address is aligned to (cuDNN picks kernels by it)
  Dims dims{};                   ///< extents; the first `rank` are used
  Dims strides{};                ///< strides in elements; the first `rank` are used

  /// The dims in use.
  [[nodiscard]] std::span<const std::int64_t> shape() const noexcept { return {dims.data(), rank}; }
  /// The strides in use.
  [[nodiscard]] std::span<const std::int64_t> stride() const noexcept { return {strides.data(), rank}; }
  /// Equal when every field is.
  friend bool operator==(const TensorDesc&, const TensorDesc&) noexcept = default;
};

/// Strides of a packed tensor of these dims in this layout.
[[nodiscard]] Dims packed_strides(std::span<const std::int64_t> dims, TensorLayout layout) noexcept;
/// Elements in the tensor's dims.
[[nodiscard]] std::uint64_t element_count(const TensorDesc& tensor) noexcept;
/// Elements a buffer must hold for the tensor: one past the largest offset its strides reach.
[[nodiscard]] std::uint64_t storage_extent(const TensorDesc& tensor) noexcept;
/// Dims in range, strides non-negative, no overflow of the extent.
[[nodiscard]] Status validate(const TensorDesc& tensor, std::string_view role);
/// The tensor as text, for messages and graph descriptions.
[[nodiscard]] std::string to_string(const TensorDesc& tensor);

}  // namespace accel::dnn

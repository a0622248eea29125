#include "libs/tensor/tensor_gather.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#include "libs/tensor/tensor_checks.hpp"

namespace accel::tensor {
namespace {

template <class S, class T>
T load(const S* data, std::uint64_t index) noexcept {
  if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    return static_cast<T>(to_float(data[index]));
  } else {
    return static_cast<T>(data[index]);
  }
}

// Walks the target's index space in order (an odometer over its modes), the source offset following along.
template <class S, class T>
void gather_from(const S* data, const Tensor& source, const Tensor& target, std::vector<T>& out) {
  std::array<std::int64_t, kMaxModes> source_strides{};
  std::int64_t stride = 1;
  for (std::size_t i = source.rank; i-- > 0;) {
    source_strides[i] = stride;
    stride *= source.extents[i];
  }
  std::array<std::int64_t, kMaxModes> strides{};  // of the source, per target mode; 0 where broadcast
  for (std::size_t i = 0; i < target.rank; ++i) {
    const std::size_t at = position(source, target.modes[i]);
    strides[i] = at == source.rank ? 0 : source_strides[at];
  }
  out.resize(element_count(target));
  if (target.rank == 0) {
    out[0] = load<S, T>(data, 0);
    return;
  }
  const std::size_t last = target.rank - 1;
  const std::int64_t inner = target.extents[last];
  const std::int64_t inner_stride = strides[last];
  std::array<std::int64_t, kMaxModes> index{};
  std::int64_t offset = 0;
  for (std::size_t written = 0; written < out.size();) {
    for (std::int64_t j = 0; j < inner; ++j)
      out[written++] = load<S, T>(data, static_cast<std::uint64_t>(offset + j * inner_stride));
    // The next index of the outer modes; the source offset moves with it.
    for (std::size_t i = last; i-- > 0;) {
      offset += strides[i];
      if (++index[i] < target.extents[i]) break;
      offset -= strides[i] * target.extents[i];
      index[i] = 0;
    }
  }
}

}  // namespace

template <class T>
void gather(const void* data, DType dtype, const Tensor& source, const Tensor& target, std::vector<T>& out) {
  switch (dtype) {
    case DType::f32: return gather_from(static_cast<const float*>(data), source, target, out);
    case DType::f64: return gather_from(static_cast<const double*>(data), source, target, out);
    case DType::f16: return gather_from(static_cast<const Half*>(data), source, target, out);
    case DType::bf16: return gather_from(static_cast<const BFloat16*>(data), source, target, out);
    default: out.assign(element_count(target), T{0});  // validation admits no other dtype
  }
}

template <class T>
void store(const std::vector<T>& values, DType dtype, void* data) {
  switch (dtype) {
    case DType::f32:
      for (std::size_t i = 0; i < values.size(); ++i) static_cast<float*>(data)[i] = static_cast<float>(values[i]);
      return;
    case DType::f64:
      for (std::size_t i = 0; i < values.size(); ++i) static_cast<double*>(data)[i] = static_cast<double>(values[i]);
      return;
    case DType::f16:
      for (std::size_t i = 0; i < values.size(); ++i)
        static_cast<Half*>(data)[i] = to_half(static_cast<float>(values[i]));
      return;
    case DType::bf16:
      for (std::size_t i = 0; i < values.size(); ++i) {
        static_cast<BFloat16*>(data)[i] = to_bfloat16(static_cast<float>(values[i]));
      }
      return;
    default: return;
  }
}

Tensor concat(const Tensor& first, const Tensor& second) {
  Tensor out = first;
  out.buffer = {};
  for (std::size_t i = 0; i < second.rank && out.rank < kMaxModes; ++i) {
    out.modes[out.rank] = second.modes[i];
    out.extents[out.rank] = second.extents[i];
    ++out.rank;
  }
  return out;
}

template void gather<float>(const void*, DType, const Tensor&, const Tensor&, std::vector<float>&);
template void gather<double>(const void*, DType, const Tensor&, const Tensor&, std::vector<double>&);
template void store<float>(const std::vector<float>&, DType, void*);
template void store<double>(const std::vector<double>&, DType, void*);

}  // namespace accel::tensor

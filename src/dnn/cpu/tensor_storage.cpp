#include "dnn/cpu/tensor_storage.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace accel::dnn::cpu {
namespace {

// memcpy rather than a cast: bound memory need not be aligned to the element, and this keeps it UB-free.
template <class T>
T read_element(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

template <class T>
void write_element(std::byte* at, T value) {
  std::memcpy(at, &value, sizeof(T));
}

double read_as_double(DType dtype, const std::byte* at) {
  switch (dtype) {
    case DType::f32: return read_element<float>(at);
    case DType::f64: return read_element<double>(at);
    case DType::f16: return to_float(read_element<Half>(at));
    case DType::bf16: return to_float(read_element<BFloat16>(at));
    case DType::fp8_e4m3: return to_float(read_element<Float8E4M3>(at));
    case DType::i8: return read_element<std::int8_t>(at);
    case DType::i32: return read_element<std::int32_t>(at);
    case DType::u8: return read_element<std::uint8_t>(at);
    case DType::u32: return read_element<std::uint32_t>(at);
    case DType::i64: return static_cast<double>(read_element<std::int64_t>(at));
    case DType::u64: return static_cast<double>(read_element<std::uint64_t>(at));
    case DType::c64:
    case DType::c128:
    case DType::c32:
    case DType::fp8_e5m2: return 0;  // can_store refuses these
  }
  return 0;
}

// The float that converts to any narrower type (f16, bf16, fp8) exactly as `value` itself would round to it
// (to nearest, ties to even). The nearest float would not do: 1 + 2^-11 + 2^-30 becomes 1 + 2^-11, an f16 tie
// that then goes down to 1, where `value` rounds up to 1 + 2^-10. Rounding to odd keeps the information that
// `value` was not a tie, and is exact for a target with at least two bits fewer than float (Boldo & Melquiond).
float round_to_odd(double value) {
  const float nearest = static_cast<float>(value);
  if (static_cast<double>(nearest) == value || std::isnan(value) || (std::bit_cast<std::uint32_t>(nearest) & 1u)) {
    return nearest;
  }
  // Consecutive floats have consecutive bit patterns, so the other neighbour of `value` is the odd one.
  const float toward = value > static_cast<double>(nearest) ? std::numeric_limits<float>::infinity()
                                                            : -std::numeric_limits<float>::infinity();
  return std::nextafter(nearest, toward);
}

void write_from_double(DType dtype, std::byte* at, double value) {
  switch (dtype) {
    case DType::f32: return write_element(at, static_cast<float>(value));
    case DType::f64: return write_element(at, value);
    case DType::f16: return write_element(at, to_half(round_to_odd(value)));
    case DType::bf16: return write_element(at, to_bfloat16(round_to_odd(value)));
    case DType::fp8_e4m3: return write_element(at, to_float8_e4m3(round_to_odd(value)));
    case DType::i8:
    case DType::i32:
    case DType::u8:
    case DType::u32:
    case DType::i64:
    case DType::u64:
    case DType::c64:
    case DType::c128:
    case DType::c32:
    case DType::fp8_e5m2: return;  // can_store refuses these
  }
}

}  // namespace

bool can_store(DType dtype) noexcept {
  switch (dtype) {
    case DType::f32:
    case DType::f64:
    case DType::f16:
    case DType::bf16:
    case DType::fp8_e4m3: return true;
    case DType::i8:
    case DType::i32:
    case DType::u8:
    case DType::u32:
    case DType::i64:
    case DType::u64:
    case DType::c64:
    case DType::c128:
    case DType::c32:
    case DType::fp8_e5m2: return false;
  }
  return false;
}

DenseTensor load(const TensorDesc& tensor, const void* data) {
  DenseTensor dense{.dims = {tensor.dims.begin(), tensor.dims.begin() + tensor.rank}};
  dense.values.reserve(static_cast<std::size_t>(volume(dense.dims)));
  const auto* bytes = static_cast<const std::byte*>(data);
  const std::size_t element = size_of(tensor.dtype);
  for_each_index<1>(dense.dims, {tensor.stride()}, [&](const auto& at) {
    dense.values.push_back(read_as_double(tensor.dtype, bytes + static_cast<std::size_t>(at[0]) * element));
  });
  return dense;
}

void store(const TensorDesc& tensor, std::span<const double> values, void* data) {
  auto* bytes = static_cast<std::byte*>(data);
  const std::size_t element = size_of(tensor.dtype);
  std::size_t next = 0;
  for_each_index<1>(tensor.shape(), {tensor.stride()}, [&](const auto& at) {
    write_from_double(tensor.dtype, bytes + static_cast<std::size_t>(at[0]) * element, values[next++]);
  });
}

}  // namespace accel::dnn::cpu

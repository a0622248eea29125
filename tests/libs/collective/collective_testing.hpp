// Helpers of the collective tests: small random integers in any dtype (every sum, product and average of them over
// two ranks is exact in every dtype, fp8 included, so results compare exactly), the expected results computed on
// integers and rounded once to the dtype, and buffers moved as raw bytes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "accel/device/device.hpp"
#include "accel/libs/collective/communicator.hpp"

namespace accel::collective::testing {

inline constexpr DType kAllDTypes[] = {DType::i8,  DType::u8,   DType::i32,      DType::u32,
                                       DType::i64, DType::u64,  DType::f16,      DType::f32,
                                       DType::f64, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2};

inline bool is_integer(DType d) {
  return d == DType::i8 || d == DType::u8 || d == DType::i32 || d == DType::u32 || d == DType::i64 || d == DType::u64;
}
inline bool is_unsigned(DType d) { return d == DType::u8 || d == DType::u32 || d == DType::u64; }

// Values in -2..2 (0..4 unsigned).
inline std::vector<double> random_values(std::mt19937& rng, DType dtype, std::size_t n) {
  std::uniform_int_distribution<int> pick(is_unsigned(dtype) ? 0 : -2, is_unsigned(dtype) ? 4 : 2);
  std::vector<double> values(n);
  for (double& v : values) v = pick(rng);
  return values;
}

inline std::vector<std::byte> to_bytes(DType dtype, const std::vector<double>& values) {
  std::vector<std::byte> out(values.size() * size_of(dtype));
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::byte* at = out.data() + i * size_of(dtype);
    const double v = values[i];
    const auto put = [&](auto x) { std::memcpy(at, &x, sizeof x); };
    switch (dtype) {
      case DType::i8: put(static_cast<std::int8_t>(v)); break;
      case DType::u8: put(static_cast<std::uint8_t>(v)); break;
      case DType::i32: put(static_cast<std::int32_t>(v)); break;
      case DType::u32: put(static_cast<std::uint32_t>(v)); break;
      case DType::i64: put(static_cast<std::int64_t>(v)); break;
      case DType::u64: put(static_cast<std::uint64_t>(v)); break;
      case DType::f16: put(to_half(static_cast<float>(v))); break;
      case DType::f32: put(static_cast<float>(v)); break;
      case DType::f64: put(v); break;
      case DType::bf16: put(to_bfloat16(static_cast<float>(v))); break;
      case DType::fp8_e4m3: put(to_float8_e4m3(static_cast<float>(v))); break;
      case DType::fp8_e5m2: put(to_float8_e5m2(static_cast<float>(v))); break;
      default: break;
    }
  }
  return out;
}

inline std::vector<double> from_bytes(DType dtype, const std::vector<std::byte>& bytes) {
  std::vector<double> out(bytes.size() / size_of(dtype));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::byte* at = bytes.data() + i * size_of(dtype);
    const auto get = [&](auto x) {
      std::memcpy(&x, at, sizeof x);
      return x;
    };
    switch (dtype) {
      case DType::i8: out[i] = get(std::int8_t{}); break;
      case DType::u8: out[i] = get(std::uint8_t{}); break;
      case DType::i32: out[i] = get(std::int32_t{}); break;
      case DType::u32: out[i] = get(std::uint32_t{}); break;
      case DType::i64: out[i] = static_cast<double>(get(std::int64_t{})); break;
      case DType::u64: out[i] = static_cast<double>(get(std::uint64_t{})); break;
      case DType::f16: out[i] = to_float(get(Half{})); break;
      case DType::f32: out[i] = get(float{}); break;
      case DType::f64: out[i] = get(double{}); break;
      case DType::bf16: out[i] = to_float(get(BFloat16{})); break;
      case DType::fp8_e4m3: out[i] = to_float(get(Float8E4M3{})); break;
      case DType::fp8_e5m2: out[i] = to_float(get(Float8E5M2{})); break;
      default: break;
    }
  }
  return out;
}

// op over the ranks' values at each index; avg of integers truncates (NCCL's), unsigned wrap does not arise.
inline std::vector<double> expected(DType dtype, ReduceOp op, const std::vector<std::vector<double>>& ranks) {
  std::vector<double> out = ranks[0];
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double v = ranks[r][i];
      switch (op) {
        case ReduceOp::sum:
        case ReduceOp::avg: out[i] += v; break;
        case ReduceOp::prod: out[i] *= v; break;
        case ReduceOp::min: out[i] = std::min(out[i], v); break;
        case ReduceOp::max: out[i] = std::max(out[i], v); break;
      }
    }
  }
  if (op == ReduceOp::avg) {
    for (double& v : out) v = is_integer(dtype) ? std::trunc(v / double(ranks.size())) : v / double(ranks.size());
  }
  // Rounded once to the dtype, as the CPU world does: an average over three ranks is not exact.
  return from_bytes(dtype, to_bytes(dtype, out));
}

inline std::vector<double> part(const std::vector<double>& v, std::size_t first, std::size_t count) {
  return {v.begin() + static_cast<std::ptrdiff_t>(first), v.begin() + static_cast<std::ptrdiff_t>(first + count)};
}

inline Result<BufferHandle> upload(const Device& device, DType dtype, const std::vector<double>& values) {
  ACCEL_ASSIGN_OR_RETURN(BufferHandle buffer, device.ask(Allocate{.dtype = dtype, .count = values.size()}).wait());
  const std::vector<std::byte> bytes = to_bytes(dtype, values);
  ACCEL_RETURN_IF_ERROR(
      device.ask(CopyToDevice{.source = {bytes.data(), values.size(), dtype}, .destination = buffer}).wait().status());
  return buffer;
}

inline Result<std::vector<double>> download(const Device& device, const BufferHandle& buffer) {
  std::vector<std::byte> bytes(buffer.bytes());
  ACCEL_RETURN_IF_ERROR(
      device.ask(CopyToHost{.source = buffer, .destination = {bytes.data(), buffer.count, buffer.dtype}})
          .wait()
          .status());
  return from_bytes(buffer.dtype, bytes);
}

}  // namespace accel::collective::testing

#include "libs/collective/host_reduce.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace accel::collective {
namespace {

template <class T>
T load(const std::byte* base, std::uint64_t i) {
  T value;
  std::memcpy(&value, base + i * sizeof(T), sizeof(T));
  return value;
}
template <class T>
void store(std::byte* base, std::uint64_t i, T value) {
  std::memcpy(base + i * sizeof(T), &value, sizeof(T));
}

template <class T>
T combine_integer(ReduceOp op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    case ReduceOp::prod: return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    case ReduceOp::min: return std::min(a, b);
    case ReduceOp::max: return std::max(a, b);
  }
  return a;
}

double combine_float(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: return a + b;
    case ReduceOp::prod: return a * b;
    case ReduceOp::min: return std::min(a, b);
    case ReduceOp::max: return std::max(a, b);
  }
  return a;
}

template <class T>
void reduce_integers(ReduceOp op, std::span<const std::byte* const> inputs, std::byte* out, std::uint64_t count) {
  const auto ranks = static_cast<T>(inputs.size());
  for (std::uint64_t i = 0; i < count; ++i) {
    T acc = load<T>(inputs[0], i);
    for (std::size_t r = 1; r < inputs.size(); ++r) acc = combine_integer(op, acc, load<T>(inputs[r], i));
    if (op == ReduceOp::avg) acc = static_cast<T>(acc / ranks);
    store(out, i, acc);
  }
}

// Storage is the element's bits; to_double and from_double convert.
template <class Storage, class ToDouble, class FromDouble>
void reduce_floats(ReduceOp op, std::span<const std::byte* const> inputs, std::byte* out, std::uint64_t count,
                   ToDouble to_double, FromDouble from_double) {
  for (std::uint64_t i = 0; i < count; ++i) {
    double acc = to_double(load<Storage>(inputs[0], i));
    for (std::size_t r = 1; r < inputs.size(); ++r)
      acc = combine_float(op, acc, to_double(load<Storage>(inputs[r], i)));
    if (op == ReduceOp::avg) acc /= static_cast<double>(inputs.size());
    store(out, i, from_double(acc));
  }
}

}  // namespace

void reduce_host(DType dtype, ReduceOp op, std::span<const std::byte* const> inputs, std::byte* out,
                 std::uint64_t count) {
  const auto narrow = [](double v) { return static_cast<float>(v); };
  switch (dtype) {
    case DType::i8: return reduce_integers<std::int8_t>(op, inputs, out, count);
    case DType::u8: return reduce_integers<std::uint8_t>(op, inputs, out, count);
    case DType::i32: return reduce_integers<std::int32_t>(op, inputs, out, count);
    case DType::u32: return reduce_integers<std::uint32_t>(op, inputs, out, count);
    case DType::i64: return reduce_integers<std::int64_t>(op, inputs, out, count);
    case DType::u64: return reduce_integers<std::uint64_t>(op, inputs, out, count);
    case DType::f32:
      return reduce_floats<float>(
          op, inputs, out, count, [](float v) { return double{v}; }, narrow);
    case DType::f64:
      return reduce_floats<double>(
          op, inputs, out, count, [](double v) { return v; }, [](double v) { return v; });
    case DType::f16:
      return reduce_floats<Half>(
          op, inputs, out, count, [](Half v) { return double{to_float(v)}; },
          [](double v) { return to_half(static_cast<float>(v)); });
    case DType::bf16:
      return reduce_floats<BFloat16>(
          op, inputs, out, count, [](BFloat16 v) { return double{to_float(v)}; },
          [](double v) { return to_bfloat16(static_cast<float>(v)); });
    case DType::fp8_e4m3:
      return reduce_floats<Float8E4M3>(
          op, inputs, out, count, [](Float8E4M3 v) { return double{to_float(v)}; },
          [](double v) { return to_float8_e4m3(static_cast<float>(v)); });
    case DType::fp8_e5m2:
      return reduce_floats<Float8E5M2>(
          op, inputs, out, count, [](Float8E5M2 v) { return double{to_float(v)}; },
          [](double v) { return to_float8_e5m2(static_cast<float>(v)); });
    case DType::c64:
    case DType::c128:
    case DType::c32: return;  // refused by check_steps
  }
}

}  // namespace accel::collective

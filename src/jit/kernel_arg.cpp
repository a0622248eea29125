#include <cstring>

#include "accel/jit/kernel.hpp"

namespace accel {
namespace {

template <class T>
KernelArg scalar(KernelArg::Kind kind, T value) {
  static_assert(sizeof(T) <= sizeof(std::uint64_t));
  KernelArg arg{.kind = kind};
  std::memcpy(&arg.bits, &value, sizeof value);
  return arg;
}

}  // namespace

KernelArg KernelArg::of(std::int32_t value) { return scalar(Kind::i32, value); }
KernelArg KernelArg::of(std::uint32_t value) { return scalar(Kind::u32, value); }
KernelArg KernelArg::of(std::int64_t value) { return scalar(Kind::i64, value); }
KernelArg KernelArg::of(std::uint64_t value) { return scalar(Kind::u64, value); }
KernelArg KernelArg::of(float value) { return scalar(Kind::f32, value); }
KernelArg KernelArg::of(double value) { return scalar(Kind::f64, value); }

std::size_t KernelArg::size() const noexcept {
  switch (kind) {
    case Kind::i32:
    case Kind::u32:
    case Kind::f32: return 4;
    case Kind::buffer:
    case Kind::i64:
    case Kind::u64:
    case Kind::f64: return 8;
  }
  return 0;
}

}  // namespace accel

#include "accel/jit/cutlass.hpp"

namespace accel {

std::string_view to_string(WhenCompiling when) noexcept {
  switch (when) {
    case WhenCompiling::wait: return "wait";
    case WhenCompiling::library_fallback: return "library_fallback";
    case WhenCompiling::unavailable: return "unavailable";
  }
  return "?";
}

std::string_view to_string(Activation activation) noexcept {
  switch (activation) {
    case Activation::identity: return "identity";
    case Activation::relu: return "relu";
    case Activation::gelu_tanh: return "gelu_tanh";
    case Activation::silu: return "silu";
  }
  return "?";
}

std::string_view to_string(BiasVector bias) noexcept {
  switch (bias) {
    case BiasVector::none: return "none";
    case BiasVector::per_row: return "per_row";
    case BiasVector::per_column: return "per_column";
  }
  return "?";
}

std::string_view to_string(ConvPass pass) noexcept {
  switch (pass) {
    case ConvPass::fprop: return "fprop";
    case ConvPass::dgrad: return "dgrad";
    case ConvPass::wgrad: return "wgrad";
  }
  return "?";
}

}  // namespace accel

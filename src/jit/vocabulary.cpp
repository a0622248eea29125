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

std::string_view to_string(ConvPass pass) noexcept {
  switch (pass) {
    case ConvPass::fprop: return "fprop";
    case ConvPass::dgrad: return "dgrad";
    case ConvPass::wgrad: return "wgrad";
  }
  return "?";
}

}  // namespace accel

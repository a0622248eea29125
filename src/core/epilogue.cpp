#include "accel/core/epilogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace accel {
namespace {

template <class T>
std::string names(std::initializer_list<T> values) {
  std::string text;
  for (const T value : values) {
    if (!text.empty()) text += ", ";
    text += to_string(value);
  }
  return text;
}

}  // namespace

std::string_view to_string(Activation activation) noexcept {
  switch (activation) {
    case Activation::identity: return "identity";
    case Activation::relu: return "relu";
    case Activation::gelu_tanh: return "gelu_tanh";
    case Activation::silu: return "silu";
    case Activation::gelu_erf: return "gelu_erf";
    case Activation::sigmoid: return "sigmoid";
    case Activation::tanh: return "tanh";
    case Activation::log1p_relu: return "log1p_relu";
  }
  return "?";
}

std::string_view to_string(BiasVector bias) noexcept {
  switch (bias) {
    case BiasVector::none: return "none";
    case BiasVector::per_row: return "per_row";
    case BiasVector::per_column: return "per_column";
    case BiasVector::per_channel: return "per_channel";
  }
  return "?";
}

std::string to_string(const Epilogue& epilogue) {
  if (!epilogue.has_bias()) return std::string(to_string(epilogue.activation));
  return fmt::format("{} + {} bias", to_string(epilogue.activation), to_string(epilogue.bias));
}

Status check_fusable(std::string_view request, const Epilogue& epilogue, std::initializer_list<Activation> activations,
                     std::initializer_list<BiasVector> biases) {
  if (std::find(activations.begin(), activations.end(), epilogue.activation) == activations.end()) {
    return not_supported(fmt::format("{} does not fuse the activation {} (it fuses {})", request,
                                     to_string(epilogue.activation), names(activations)));
  }
  if (std::find(biases.begin(), biases.end(), epilogue.bias) == biases.end()) {
    return not_supported(
        fmt::format("{} does not fuse a {} bias (it takes {})", request, to_string(epilogue.bias), names(biases)));
  }
  return Status();
}

double activate(Activation activation, double x) noexcept {
  switch (activation) {
    case Activation::identity: return x;
    case Activation::relu: return x > 0.0 ? x : 0.0;
    case Activation::gelu_tanh: {
      constexpr double kSqrt2OverPi = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
      return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    }
    case Activation::silu: return x / (1.0 + std::exp(-x));
    case Activation::gelu_erf: return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
    case Activation::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Activation::tanh: return std::tanh(x);
    case Activation::log1p_relu: return std::log1p(std::max(x, 0.0));
  }
  return x;
}

}  // namespace accel

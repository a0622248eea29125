/// @file
/// accel::Epilogue — what a library applies to a product before it stores it, one vocabulary for every family
/// that fuses it (Gemm, ConvFwd, CutlassGemm):
///
/// @code
///   out = activation(product + bias)
/// @endcode
///
/// @code
///   accel::Gemm gemm{.shape = {.m = 128, .n = 64, .k = 256,
///                              .epilogue = {.activation = accel::Activation::gelu_tanh,
///                                           .bias = accel::BiasVector::per_column}},
///                    .a = a, .b = b, .c = c, .bias = bias};
/// @endcode
///
/// Each family fuses what its library fuses and answers not_supported, naming the activation or bias, for the
/// rest (the families' headers list what they take). The CPU references compute every activation with
/// `activate`, so all devices agree on what each one means.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "accel/core/status.hpp"

namespace accel {

/// The values of the first four are those CutlassGemm's requests had before the vocabulary was shared; they are
/// kept so that nothing keyed by them moves.
enum class Activation : std::uint8_t {
  identity,
  relu,       ///< max(x, 0)
  gelu_tanh,  ///< GELU, tanh approximation: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (cuBLASLt's, CUTLASS's)
  silu,       ///< x sigmoid(x) (swish with beta 1)
  gelu_erf,   ///< GELU, exact: x/2 (1 + erf(x / sqrt 2)) (cuDNN's GELU_FWD)
  sigmoid,    ///< 1 / (1 + exp(-x))
  tanh,
  log1p_relu,  ///< log(1 + max(x, 0)) (SPLADE's term weight; no library fuses it)
};

/// The vector added before the activation, with the output's element type.
enum class BiasVector : std::uint8_t {
  none,
  per_row,      ///< one element per row of a matrix output (m elements): out[i][j] += bias[i]
  per_column,   ///< one element per column (n elements): out[i][j] += bias[j]
  per_channel,  ///< one element per output channel of a convolution (K), the same for every image and position
};

/// What a library applies to a product before storing it: an activation, after an optional bias vector.
struct Epilogue {
  Activation activation = Activation::identity;  ///< applied last
  BiasVector bias = BiasVector::none;            ///< added before the activation, of the output's element type

  /// Whether a bias vector is added.
  [[nodiscard]] bool has_bias() const noexcept { return bias != BiasVector::none; }
  /// Equal when every field is.
  friend bool operator==(const Epilogue&, const Epilogue&) noexcept = default;
};

/// The activation's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(Activation activation) noexcept;
/// The bias vector's name, for messages and plan keys.
[[nodiscard]] std::string_view to_string(BiasVector bias) noexcept;
/// "relu", "gelu_tanh + per_column bias".
[[nodiscard]] std::string to_string(const Epilogue& epilogue);

/// not_supported when `epilogue`'s activation is not one of `activations` or its bias not one of `biases`; the
/// message names `request`, what it was given and what it fuses.
[[nodiscard]] Status check_fusable(std::string_view request, const Epilogue& epilogue,
                                   std::initializer_list<Activation> activations,
                                   std::initializer_list<BiasVector> biases);

/// The activation in double precision: the one definition the CPU references (GEMM, convolution and graph
/// pointwise nodes, the CUTLASS reference) use.
[[nodiscard]] double activate(Activation activation, double x) noexcept;

}  // namespace accel

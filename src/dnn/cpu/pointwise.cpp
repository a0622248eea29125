#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "accel/core/epilogue.hpp"
#include "dnn/cpu/kernels.hpp"

namespace accel::dnn::cpu {
namespace {

// log(1 + exp(z)) without overflowing exp for large z.
double log1p_exp(double z) { return std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z))); }

double unary(PointwiseMode mode, double x, double alpha) {
  switch (mode) {
    // The activations every family fuses are defined once (core/epilogue.hpp).
    case PointwiseMode::relu: return activate(Activation::relu, x);
    case PointwiseMode::sigmoid: return activate(Activation::sigmoid, x);
    case PointwiseMode::tanh: return activate(Activation::tanh, x);
    case PointwiseMode::gelu: return activate(Activation::gelu_erf, x);
    case PointwiseMode::gelu_approx_tanh: return activate(Activation::gelu_tanh, x);
    case PointwiseMode::swish: return x * activate(Activation::sigmoid, alpha * x);
    case PointwiseMode::elu: return x > 0 ? x : alpha * std::expm1(x);
    case PointwiseMode::softplus: return log1p_exp(alpha * x) / alpha;
    case PointwiseMode::identity: return x;
    case PointwiseMode::sqrt: return std::sqrt(x);
    case PointwiseMode::rsqrt: return 1.0 / std::sqrt(x);
    case PointwiseMode::exp: return std::exp(x);
    case PointwiseMode::log: return std::log(x);
    case PointwiseMode::neg: return -x;
    case PointwiseMode::abs: return std::abs(x);
    default: return std::nan("");  // binary modes never get here
  }
}

double binary(PointwiseMode mode, double a, double b) {
  switch (mode) {
    case PointwiseMode::add: return a + b;
    case PointwiseMode::sub: return a - b;
    case PointwiseMode::mul: return a * b;
    case PointwiseMode::div: return a / b;
    // fmin/fmax, as CUDA's: a NaN operand gives the other one.
    case PointwiseMode::min: return std::fmin(a, b);
    case PointwiseMode::max: return std::fmax(a, b);
    default: return std::nan("");  // unary modes never get here
  }
}

}  // namespace

Result<DenseTensor> pointwise(const PointwiseNode& node, const DenseTensor& a, const DenseTensor* b,
                              DenseDims out_dims) {
  if (is_binary(node.mode) != (b != nullptr)) {
    return invalid_argument(
        fmt::format("pointwise {}: given {} operand(s)", to_string(node.mode), b != nullptr ? 2 : 1));
  }
  DenseTensor out{.dims = {out_dims.begin(), out_dims.end()}, .values = std::vector<double>(volume(out_dims))};
  ACCEL_ASSIGN_OR_RETURN(const std::vector<std::int64_t> a_strides, broadcast_strides(a.dims, out_dims));
  std::size_t next = 0;
  if (b == nullptr) {
    const double alpha = node.alpha;
    for_each_index<1>(out_dims, {a_strides},
                      [&](const auto& at) { out.values[next++] = unary(node.mode, a.values[at[0]], alpha); });
  } else {
    ACCEL_ASSIGN_OR_RETURN(const std::vector<std::int64_t> b_strides, broadcast_strides(b->dims, out_dims));
    for_each_index<2>(out_dims, {a_strides, b_strides}, [&](const auto& at) {
      out.values[next++] = binary(node.mode, a.values[at[0]], b->values[at[1]]);
    });
  }
  return out;
}

}  // namespace accel::dnn::cpu

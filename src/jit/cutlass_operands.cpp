#include "jit/cutlass_operands.hpp"

#include <fmt/format.h>

#include <cmath>

namespace accel::jit {
namespace {

Result<std::byte*> resolve(const device::BufferTable& table, std::string_view request, std::string_view name,
                           const BufferHandle& handle, DType expected, std::uint64_t offset, std::uint64_t extent) {
  ACCEL_ASSIGN_OR_RETURN(const device::BufferView view, table.resolve_range(handle, name, offset, extent));
  if (view.dtype != expected) {
    return invalid_argument(fmt::format("{}: {} is a buffer of {}, the request needs {}", request, name,
                                        to_string(view.dtype), to_string(expected)));
  }
  return static_cast<std::byte*>(view.data) + offset * size_of(view.dtype);
}

Result<CutlassGemmOperands> resolve_one(std::string_view request, const BufferHandle& a, const BufferHandle& b,
                                        const BufferHandle& c, const BufferHandle& d, DType input, DType output,
                                        const CutlassGemmGeometry& g, const device::BufferTable& table) {
  CutlassGemmOperands operands;
  ACCEL_ASSIGN_OR_RETURN(operands.a, resolve(table, request, "a", a, input, g.a.offset, g.a.extent));
  ACCEL_ASSIGN_OR_RETURN(operands.b, resolve(table, request, "b", b, input, g.b.offset, g.b.extent));
  ACCEL_ASSIGN_OR_RETURN(operands.d, resolve(table, request, "d", d, output, g.d.offset, g.d.extent));
  if (g.epilogue.source) {
    ACCEL_ASSIGN_OR_RETURN(operands.c, resolve(table, request, "c", c, output, g.c.offset, g.c.extent));
  }
  return operands;
}

double load(const std::byte* base, DType dtype, std::int64_t index) {
  switch (dtype) {
    case DType::f32: return reinterpret_cast<const float*>(base)[index];
    case DType::f16: return to_float(reinterpret_cast<const Half*>(base)[index]);
    case DType::bf16: return to_float(reinterpret_cast<const BFloat16*>(base)[index]);
    case DType::fp8_e4m3: return to_float(reinterpret_cast<const Float8E4M3*>(base)[index]);
    default: return 0.0;  // check_cutlass_gemm admits no other type
  }
}

void store(std::byte* base, DType dtype, std::int64_t index, double value) {
  const float f = static_cast<float>(value);
  switch (dtype) {
    case DType::f32: reinterpret_cast<float*>(base)[index] = f; break;
    case DType::f16: reinterpret_cast<Half*>(base)[index] = to_half(f); break;
    case DType::bf16: reinterpret_cast<BFloat16*>(base)[index] = to_bfloat16(f); break;
    default: break;
  }
}

void reference_one(DType input, DType output, Activation activation, float alpha, float beta,
                   const CutlassGemmGeometry& g, const CutlassGemmOperands& o) {
  const std::int64_t m = g.d.rows;
  const std::int64_t n = g.d.cols;
  const std::int64_t k = g.a.cols;
  // A and B in double once, row-major A (m x k) and column-major B (k x n), so the inner loop is contiguous.
  std::vector<double> a(static_cast<std::size_t>(m * k));
  std::vector<double> b(static_cast<std::size_t>(k * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p) a[i * k + p] = load(o.a, input, g.a.index(i, p));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t p = 0; p < k; ++p) b[j * k + p] = load(o.b, input, g.b.index(p, j));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (std::int64_t p = 0; p < k; ++p) acc += a[i * k + p] * b[j * k + p];
      double value = alpha * acc;
      if (o.row_scale != nullptr) value *= reinterpret_cast<const float*>(o.row_scale)[i];
      if (o.col_scale != nullptr) value *= reinterpret_cast<const float*>(o.col_scale)[j];
      if (o.c != nullptr) value += beta * load(o.c, output, g.c.index(i, j));
      if (o.bias != nullptr) {
        value += load(o.bias, output, g.epilogue.bias == BiasVector::per_row ? i : j);
      }
      value = activate(activation, value);
      if (o.residual != nullptr) value += load(o.residual, output, g.d.index(i, j));
      store(o.d, output, g.d.index(i, j), value);
    }
  }
}

}  // namespace

double activate(Activation activation, double x) noexcept {
  switch (activation) {
    case Activation::relu: return x > 0.0 ? x : 0.0;
    case Activation::gelu_tanh: {
      constexpr double kSqrt2OverPi = 0.7978845608028654;
      return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    }
    case Activation::silu: return x / (1.0 + std::exp(-x));
    case Activation::identity: break;
  }
  return x;
}

void blend(void* out, const void* before, DType dtype, std::uint64_t count, float alpha, float beta) {
  auto* o = static_cast<std::byte*>(out);
  const auto* b = static_cast<const std::byte*>(before);
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto index = static_cast<std::int64_t>(i);
    store(o, dtype, index, alpha * load(o, dtype, index) + beta * load(b, dtype, index));
  }
}

Result<CutlassGemmOperands> resolve_cutlass_gemm(const CutlassGemm& r, const CutlassGemmGeometry& g,
                                                 const device::BufferTable& table) {
  constexpr std::string_view kName = "CutlassGemm";
  ACCEL_ASSIGN_OR_RETURN(CutlassGemmOperands operands,
                         resolve_one(kName, r.a, r.b, r.c, r.d, r.input, r.output, g, table));
  if (g.bias_extent != 0) {
    ACCEL_ASSIGN_OR_RETURN(operands.bias, resolve(table, kName, "bias", r.bias, r.output, 0, g.bias_extent));
  }
  if (g.epilogue.row_scale) {
    ACCEL_ASSIGN_OR_RETURN(operands.row_scale, resolve(table, kName, "row_scale", r.row_scale, DType::f32, 0,
                                                       static_cast<std::uint64_t>(r.m)));
  }
  if (g.epilogue.col_scale) {
    ACCEL_ASSIGN_OR_RETURN(operands.col_scale, resolve(table, kName, "col_scale", r.col_scale, DType::f32, 0,
                                                       static_cast<std::uint64_t>(r.n)));
  }
  if (g.epilogue.residual) {
    ACCEL_ASSIGN_OR_RETURN(operands.residual, resolve(table, kName, "residual", r.residual, r.output, 0, g.d.extent));
  }
  return operands;
}

Result<std::vector<CutlassGemmOperands>> resolve_cutlass_grouped_gemm(const CutlassGroupedGemm& r,
                                                                      const std::vector<CutlassGemmGeometry>& groups,
                                                                      const device::BufferTable& table) {
  std::vector<CutlassGemmOperands> operands;
  operands.reserve(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const GemmGroup& group = r.groups[i];
    ACCEL_ASSIGN_OR_RETURN(CutlassGemmOperands one,
                           resolve_one(fmt::format("CutlassGroupedGemm group {}", i), group.a.buffer, group.b.buffer,
                                       group.c.buffer, group.d.buffer, r.input, r.output, groups[i], table));
    operands.push_back(one);
  }
  return operands;
}

Result<CutlassConvOperands> resolve_cutlass_conv(const CutlassConv& r, const ConvExtents& extents,
                                                 const device::BufferTable& table) {
  constexpr std::string_view kName = "CutlassConv";
  const DType dtype = r.shape.dtype;
  CutlassConvOperands operands;
  ACCEL_ASSIGN_OR_RETURN(operands.x, resolve(table, kName, "x", r.x, dtype, 0, extents.x));
  ACCEL_ASSIGN_OR_RETURN(operands.w, resolve(table, kName, "w", r.w, dtype, 0, extents.w));
  ACCEL_ASSIGN_OR_RETURN(operands.y, resolve(table, kName, "y", r.y, dtype, 0, extents.y));
  return operands;
}

void reference_gemm(const CutlassGemm& r, const CutlassGemmGeometry& g, const CutlassGemmOperands& o) {
  reference_one(r.input, r.output, r.activation, r.alpha, r.beta, g, o);
}

void reference_grouped_gemm(const CutlassGroupedGemm& r, const std::vector<CutlassGemmGeometry>& groups,
                            const std::vector<CutlassGemmOperands>& operands) {
  for (std::size_t i = 0; i < groups.size(); ++i) {
    reference_one(r.input, r.output, Activation::identity, r.alpha, r.beta, groups[i], operands[i]);
  }
}

}  // namespace accel::jit

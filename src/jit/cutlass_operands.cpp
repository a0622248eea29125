#include "jit/cutlass_operands.hpp"

#include <fmt/format.h>

#include <string>

namespace accel::jit {
namespace {

// The operands every GEMM of a request has, at `first`: a, b, c (absent without C), d.
void gemm_matrices(Operands& operands, const std::string& prefix, const BufferHandle& a, const BufferHandle& b,
                   const BufferHandle& c, const BufferHandle& d, DType input, DType output,
                   const CutlassGemmGeometry& g) {
  operands.add({.buffer = a,
                .name = prefix + "a",
                .first = g.a.offset,
                .count = g.a.extent,
                .check_dtype = true,
                .dtype = input});
  operands.add({.buffer = b,
                .name = prefix + "b",
                .first = g.b.offset,
                .count = g.b.extent,
                .check_dtype = true,
                .dtype = input});
  if (g.epilogue.source) {
    operands.add({.buffer = c,
                  .name = prefix + "c",
                  .first = g.c.offset,
                  .count = g.c.extent,
                  .check_dtype = true,
                  .dtype = output});
  } else {
    operands.absent(prefix + "c");
  }
  operands.add({.buffer = d,
                .name = prefix + "d",
                .access = Access::write,
                .first = g.d.offset,
                .count = g.d.extent,
                .check_dtype = true,
                .dtype = output});
}

template <class Optional>
void optional_operand(Operands& operands, bool present, const BufferHandle& buffer, const char* name, DType dtype,
                      Optional extent) {
  if (present) {
    operands.typed(buffer, name, Access::read, dtype, static_cast<std::uint64_t>(extent));
  } else {
    operands.absent(name);
  }
}

std::byte* address(const BufferView& view, std::uint64_t first) {
  return view.data == nullptr ? nullptr : view.at(first);
}

CutlassGemmOperands matrix_addresses(std::span<const BufferView> views, const CutlassGemmGeometry& g) {
  return {.a = address(views[0], g.a.offset),
          .b = address(views[1], g.b.offset),
          .c = address(views[2], g.c.offset),
          .d = address(views[3], g.d.offset)};
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

void reference_one(DType input, DType output, float alpha, float beta, const CutlassGemmGeometry& g,
                   const CutlassGemmOperands& o) {
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
      value = activate(g.epilogue.activation, value);
      if (o.residual != nullptr) value += load(o.residual, output, g.d.index(i, j));
      store(o.d, output, g.d.index(i, j), value);
    }
  }
}

}  // namespace

void blend(void* out, const void* before, DType dtype, std::uint64_t count, float alpha, float beta) {
  auto* o = static_cast<std::byte*>(out);
  const auto* b = static_cast<const std::byte*>(before);
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto index = static_cast<std::int64_t>(i);
    store(o, dtype, index, alpha * load(o, dtype, index) + beta * load(b, dtype, index));
  }
}

void cutlass_gemm_operands(const CutlassGemm& r, const CutlassGemmGeometry& g, Operands& operands) {
  gemm_matrices(operands, "", r.a, r.b, r.c, r.d, r.input, r.output, g);
  optional_operand(operands, g.bias_extent != 0, r.bias, "bias", r.output, g.bias_extent);
  optional_operand(operands, g.epilogue.row_scale, r.row_scale, "row_scale", DType::f32, r.m);
  optional_operand(operands, g.epilogue.col_scale, r.col_scale, "col_scale", DType::f32, r.n);
  optional_operand(operands, g.epilogue.residual, r.residual, "residual", r.output, g.d.extent);
}

CutlassGemmOperands cutlass_gemm_addresses(std::span<const BufferView> views, const CutlassGemmGeometry& g) {
  CutlassGemmOperands o = matrix_addresses(views, g);
  o.bias = address(views[4], 0);
  o.row_scale = address(views[5], 0);
  o.col_scale = address(views[6], 0);
  o.residual = address(views[7], 0);
  return o;
}

void cutlass_grouped_gemm_operands(const CutlassGroupedGemm& r, const std::vector<CutlassGemmGeometry>& groups,
                                   Operands& operands) {
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const GemmGroup& group = r.groups[i];
    gemm_matrices(operands, fmt::format("group {} ", i), group.a.buffer, group.b.buffer, group.c.buffer, group.d.buffer,
                  r.input, r.output, groups[i]);
  }
}

std::vector<CutlassGemmOperands> cutlass_grouped_gemm_addresses(std::span<const BufferView> views,
                                                                const std::vector<CutlassGemmGeometry>& groups) {
  std::vector<CutlassGemmOperands> addresses;
  addresses.reserve(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i)
    addresses.push_back(matrix_addresses(views.subspan(4 * i, 4), groups[i]));
  return addresses;
}

void cutlass_conv_operands(const CutlassConv& r, const ConvExtents& extents, Operands& operands) {
  const DType dtype = r.shape.dtype;
  const auto access = [&](ConvPass written) { return r.pass == written ? Access::write : Access::read; };
  operands.typed(r.x, "x", access(ConvPass::dgrad), dtype, extents.x)
      .typed(r.w, "w", access(ConvPass::wgrad), dtype, extents.w)
      .typed(r.y, "y", access(ConvPass::fprop), dtype, extents.y);
}

void reference_gemm(const CutlassGemm& r, const CutlassGemmGeometry& g, const CutlassGemmOperands& o) {
  reference_one(r.input, r.output, r.alpha, r.beta, g, o);
}

void reference_grouped_gemm(const CutlassGroupedGemm& r, const std::vector<CutlassGemmGeometry>& groups,
                            const std::vector<CutlassGemmOperands>& operands) {
  for (std::size_t i = 0; i < groups.size(); ++i) {
    reference_one(r.input, r.output, r.alpha, r.beta, groups[i], operands[i]);
  }
}

}  // namespace accel::jit

// The operands of the CUTLASS requests (their operation contract's list: each buffer with the element type and
// the range it must hold) and their addresses once resolved; the double-precision reference the CPU device runs.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/jit/cutlass.hpp"
#include "jit/cutlass_requests.hpp"
#include "operation/operation.hpp"

namespace accel::jit {

struct CutlassGemmOperands {
  std::byte* a = nullptr;
  std::byte* b = nullptr;
  std::byte* c = nullptr;  // null without C
  std::byte* d = nullptr;
  std::byte* bias = nullptr;
  std::byte* row_scale = nullptr;
  std::byte* col_scale = nullptr;
  std::byte* residual = nullptr;
};

// a, b, c, d, bias, row_scale, col_scale, residual (the absent ones kept in place).
void cutlass_gemm_operands(const CutlassGemm& request, const CutlassGemmGeometry& geometry, Operands& operands);
[[nodiscard]] CutlassGemmOperands cutlass_gemm_addresses(std::span<const BufferView> views,
                                                         const CutlassGemmGeometry& geometry);
// a, b, c, d of each group in turn.
void cutlass_grouped_gemm_operands(const CutlassGroupedGemm& request, const std::vector<CutlassGemmGeometry>& groups,
                                   Operands& operands);
[[nodiscard]] std::vector<CutlassGemmOperands> cutlass_grouped_gemm_addresses(
    std::span<const BufferView> views, const std::vector<CutlassGemmGeometry>& groups);

// x, w, y: the one the pass writes is written.
void cutlass_conv_operands(const CutlassConv& request, const ConvExtents& extents, Operands& operands);

// D = activation(alpha * A B * row_scale * col_scale + beta * C + bias) + residual in double, stored through
// f32 (as the kernels' f32 epilogue stores): what the GPU kernels are compared against.
void reference_gemm(const CutlassGemm& request, const CutlassGemmGeometry& geometry,
                    const CutlassGemmOperands& operands);
void reference_grouped_gemm(const CutlassGroupedGemm& request, const std::vector<CutlassGemmGeometry>& groups,
                            const std::vector<CutlassGemmOperands>& operands);

// out[i] = alpha * out[i] + beta * before[i] for `count` elements of `dtype` (f16, bf16, f32).
void blend(void* out, const void* before, DType dtype, std::uint64_t count, float alpha, float beta);

}  // namespace accel::jit

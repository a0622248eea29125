// The buffers of CUTLASS requests resolved against a device's buffer table: each operand's address, its
// element type and extent checked. Shared by the CPU reference and the CUDA streams.
#pragma once

#include <cstddef>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/jit/cutlass.hpp"
#include "device/buffer_table.hpp"
#include "jit/cutlass_requests.hpp"

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

[[nodiscard]] Result<CutlassGemmOperands> resolve_cutlass_gemm(const CutlassGemm& request,
                                                               const CutlassGemmGeometry& geometry,
                                                               const device::BufferTable& table);
[[nodiscard]] Result<std::vector<CutlassGemmOperands>> resolve_cutlass_grouped_gemm(
    const CutlassGroupedGemm& request, const std::vector<CutlassGemmGeometry>& groups,
    const device::BufferTable& table);

struct CutlassConvOperands {
  std::byte* x = nullptr;
  std::byte* w = nullptr;
  std::byte* y = nullptr;
};

[[nodiscard]] Result<CutlassConvOperands> resolve_cutlass_conv(const CutlassConv& request, const ConvExtents& extents,
                                                               const device::BufferTable& table);

// D = activation(alpha * A B * row_scale * col_scale + beta * C + bias) + residual in double, stored through
// f32 (as the kernels' f32 epilogue stores): what the GPU kernels are compared against.
void reference_gemm(const CutlassGemm& request, const CutlassGemmGeometry& geometry,
                    const CutlassGemmOperands& operands);
void reference_grouped_gemm(const CutlassGroupedGemm& request, const std::vector<CutlassGemmGeometry>& groups,
                            const std::vector<CutlassGemmOperands>& operands);

// out[i] = alpha * out[i] + beta * before[i] for `count` elements of `dtype` (f16, bf16, f32).
void blend(void* out, const void* before, DType dtype, std::uint64_t count, float alpha, float beta);

// The activation of the epilogue, in double (GELU in its tanh form).
[[nodiscard]] double activate(Activation activation, double x) noexcept;

}  // namespace accel::jit

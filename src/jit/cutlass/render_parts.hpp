// The pieces of render.cpp per instance family, and what they share.
#pragma once

#include <string>
#include <string_view>

#include "accel/core/result.hpp"
#include "jit/cutlass/render.hpp"

namespace accel::jit::cutlass {

// What one block may use of an sm_90 multiprocessor's shared memory (CUTLASS's sm90_smem_capacity_bytes).
inline constexpr int kSm90SmemBytes = 232448;

[[nodiscard]] Status validate_gemm(const GemmInstance& instance);
[[nodiscard]] Status validate_grouped_gemm(const GroupedGemmInstance& instance);
[[nodiscard]] Status validate_conv(const ConvInstance& instance);

[[nodiscard]] std::string render_gemm(const GemmInstance& instance, std::string_view identity);
[[nodiscard]] std::string render_grouped_gemm(const GroupedGemmInstance& instance, std::string_view identity);
[[nodiscard]] std::string render_conv(const ConvInstance& instance, std::string_view identity);

// CUTLASS's name of an element type ("cutlass::half_t", "cutlass::bfloat16_t", "cutlass::float_e4m3_t", "float").
[[nodiscard]] std::string_view cutlass_element(DType dtype);
[[nodiscard]] std::string_view to_string(Layout layout) noexcept;
[[nodiscard]] std::string_view to_string(Schedule schedule) noexcept;
[[nodiscard]] std::string_view to_string(ConvDirection direction) noexcept;

// A convolution module's text after the prologue, its placeholders (@DIRECTION@, @ELEMENT@, ...) unfilled.
[[nodiscard]] std::string_view conv_module_text() noexcept;

// What every rendered module starts with: the ABI structs (module_abi.hpp), the identity and layout entry points.
[[nodiscard]] std::string module_prologue(std::string_view identity);

}  // namespace accel::jit::cutlass

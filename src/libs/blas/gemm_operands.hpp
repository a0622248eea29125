// Resolving a Gemm's buffer handles against a device's buffer table: shared by every BLAS backend, so the
// same request is refused for the same reasons on every device.
#pragma once

#include "accel/libs/blas/gemm.hpp"
#include "device/buffer_table.hpp"

namespace accel::blas {

struct GemmOperands {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* bias = nullptr;  // null unless the epilogue has a bias
};

// Checks dtypes, extents and aliasing of every operand; nothing is launched before this passes.
[[nodiscard]] Result<GemmOperands> resolve_gemm_operands(const Gemm& gemm, const GemmGeometry& geometry,
                                                         const device::BufferTable& table);

}  // namespace accel::blas

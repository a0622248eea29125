// A gated MLP's projection fused with its gate (cuda_gated_matmul.cu, sm_90a code): y [rows, width] =
// act(x Wgᵀ) * (x Wuᵀ) for x [rows, k] and the gate and up weights Wg, Wu [width, k], without writing the
// [rows, 2 width] product. W is the two stacked and interleaved by eight rows: row 16 i + j of W is Wg's row 8 i + j
// for j < 8 and Wu's row 8 i + j - 8 otherwise (gated_matmul_weight_row).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "accel/core/dtype.hpp"
#include "graph/kernels/op_kinds.hpp"

namespace accel::graph::cuda {

// The order the mainloop's persistent scheduler visits output tiles in (CUTLASS's max_swizzle_size and raster order).
// The fastest raster order changed from call to call of gated_matmul_bench on the H200 (docs/PERFORMANCE.md §73), so
// the default keeps the scheduler's heuristic.
enum class GatedMatmulRaster : std::uint8_t { heuristic, along_m, along_n };
struct GatedMatmulTuning {
  int swizzle = 1;  // 1, 2, 4 or 8
  GatedMatmulRaster raster = GatedMatmulRaster::heuristic;
};

// The row of the stacked [gate; up] weight (2 width rows) that row `row` of the interleaved weight holds.
constexpr std::int64_t gated_matmul_weight_row(std::int64_t row, std::int64_t width) {
  const std::int64_t group = row / 16, within = row % 16;
  return within < 8 ? 8 * group + within : width + 8 * group + within - 8;
}

// Whether the current device runs sm_90a code (an H100 or H200).
bool gated_matmul_runs_here();

// f16/bf16, silu or gelu_erf, width and k multiples of 8, x, w and y 16-byte aligned, sizes within int.
bool gated_matmul_fits(DType dtype, Activation activation, std::int64_t rows, std::int64_t width, std::int64_t k,
                       const void* x, const void* w, const void* y);

// cudaErrorInvalidValue where gated_matmul_fits does not hold, cudaErrorInvalidDevice on a device other than sm_90.
cudaError_t gated_matmul(DType dtype, Activation activation, const void* x, const void* w, std::int64_t rows,
                         std::int64_t width, std::int64_t k, void* y, cudaStream_t stream,
                         GatedMatmulTuning tuning = {});

}  // namespace accel::graph::cuda

// What callers of the fused GEMMs on CUTLASS's Hopper mainloop (cuda_gated_matmul.hpp, cuda_rope_matmul.hpp) share:
// whether this device runs their sm_90a code, and the order their persistent scheduler visits output tiles in.
#pragma once

#include <cstdint>

namespace accel::graph::cuda {

// Whether the current device runs sm_90a code (an H100 or H200).
bool sm90a_runs_here();

// The order the mainloop's persistent scheduler visits output tiles in (CUTLASS's max_swizzle_size and raster order).
// The fastest raster order changed from call to call of gated_matmul_bench on the H200 (docs/PERFORMANCE.md §73), so
// the default keeps the scheduler's heuristic.
enum class TileRaster : std::uint8_t { heuristic, along_m, along_n };
struct TileSchedule {
  int swizzle = 1;  // 1, 2, 4 or 8
  TileRaster raster = TileRaster::heuristic;
  int variant = 0;  // experiment: sm90::dispatch_variant
};

constexpr bool valid_schedule(const TileSchedule& schedule) {
  return (schedule.swizzle == 1 || schedule.swizzle == 2 || schedule.swizzle == 4 || schedule.swizzle == 8) &&
         schedule.variant >= 0 && schedule.variant < 8;
}

}  // namespace accel::graph::cuda

// jit_bench's tile parts: CUTLASS tile configurations beside accel's defaults, to choose those from measurements.
//   tiles   GEMM tiles, bf16 and fp8 e4m3 -> bf16, 4096^3 and 8192^3
//   sweeps  grouped-GEMM tiles on the MoE problem, convolution tiles on four ResNet-50 layers
#include <array>

#include "jit/jit_bench_common.hpp"

namespace accel::bench {
namespace {

// GEMM tiles beside accel's default.
const KernelTile kSweep[] = {
    {.m = 128, .n = 256, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_cooperative},
    {.m = 128, .n = 256, .k = 64, .cluster_m = 1, .cluster_n = 2, .schedule = KernelSchedule::tma_cooperative},
    {.m = 256, .n = 128, .k = 64, .cluster_m = 1, .cluster_n = 2, .schedule = KernelSchedule::tma_cooperative},
    {.m = 256, .n = 128, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_cooperative},
    {.m = 128, .n = 256, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_pingpong},
    {.m = 128, .n = 128, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_pingpong},
};

std::string to_string(const KernelTile& t) {
  return fmt::format("{}x{}x{} c{}x{} {}", t.m, t.n, t.k, t.cluster_m, t.cluster_n,
                     t.schedule == KernelSchedule::tma_pingpong ? "pingpong" : "cooperative");
}

// Grouped GEMM and convolution tiles beside accel's defaults.
const KernelTile kGroupedSweep[] = {
    {.m = 128, .n = 256, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_cooperative},
    {.m = 128, .n = 128, .k = 64, .cluster_m = 1, .cluster_n = 1, .schedule = KernelSchedule::tma_cooperative},
    {.m = 128, .n = 128, .k = 64, .cluster_m = 2, .cluster_n = 1, .schedule = KernelSchedule::tma_cooperative},
    {.m = 128, .n = 256, .k = 64, .cluster_m = 1, .cluster_n = 2, .schedule = KernelSchedule::tma_cooperative},
    {.m = 64, .n = 128, .k = 64, .cluster_m = 1, .cluster_n = 1, .schedule = KernelSchedule::tma_pingpong},
    {.m = 64, .n = 256, .k = 64, .cluster_m = 1, .cluster_n = 2, .schedule = KernelSchedule::tma_pingpong},
};
const KernelTile kConvSweep[] = {
    {.m = 128, .n = 128, .k = 64, .cluster_m = 1, .cluster_n = 1},
    {.m = 128, .n = 64, .k = 64, .cluster_m = 1, .cluster_n = 1},
    {.m = 128, .n = 128, .k = 64, .cluster_m = 2, .cluster_n = 1},
    {.m = 64, .n = 128, .k = 64, .cluster_m = 2, .cluster_n = 1},
    {.m = 128, .n = 64, .k = 64, .cluster_m = 2, .cluster_n = 1},
};

}  // namespace

void tiles_part(const Device& device) {
  for (DType dtype : {DType::bf16, DType::fp8_e4m3}) {
    const DType output = DType::bf16;
    const GemmBuffers small = gemm_buffers(device, dtype, output, 256, 256, 128);
    for (KernelTile tile : kSweep) {
      if (dtype == DType::fp8_e4m3) tile.k = 128;
      CutlassGemm r = cutlass_gemm(small, dtype, output, 256, 256, 128);
      r.tile = tile;
      r.when_compiling = WhenCompiling::unavailable;
      (void)device.ask(r).wait();
    }
    for (std::int64_t s : {4096, 8192}) {
      const GemmBuffers g = gemm_buffers(device, dtype, output, s, s, s);
      for (KernelTile tile : kSweep) {
        if (dtype == DType::fp8_e4m3) tile.k = 128;
        CutlassGemm r = cutlass_gemm(g, dtype, output, s, s, s);
        r.tile = tile;
        const double us = pipelined_micros(device, [&] { return device.ask(r); });
        row("tiles", fmt::format("{}->{} {}^3", to_string(dtype), to_string(output), s), to_string(tile), "TFLOP/s",
            tflops(2.0 * s * s * s, us));
      }
    }
  }
}

void tile_sweeps_part(const Device& device) {
  double flops = 0;
  std::int64_t total_m = 0;
  CutlassGroupedGemm grouped = moe_problem(device, DType::bf16, &flops, &total_m, nullptr);
  for (const KernelTile& tile : kGroupedSweep) {
    grouped.tile = tile;
    grouped.when_compiling = WhenCompiling::unavailable;
    (void)device.ask(grouped).wait();
  }
  const ConvShape layers[] = {resnet_shape(64, 64, 56, 3, 1), resnet_shape(512, 512, 7, 3, 1),
                              resnet_shape(256, 64, 56, 1, 1), resnet_shape(128, 128, 28, 3, 1)};
  std::vector<std::array<BufferHandle, 3>> tensors;
  for (const ConvShape& s : layers) {
    const std::int64_t p = (s.input[0] + 2 * s.pre_padding[0] - s.filter[0]) / s.stride[0] + 1;
    tensors.push_back({random_buffer(device, DType::f16, s.n * s.input[0] * s.input[1] * s.c, 1),
                       random_buffer(device, DType::f16, s.k * s.filter[0] * s.filter[1] * s.c, 2, 0.1f),
                       random_buffer(device, DType::f16, s.n * p * p * s.k, 3)});
  }
  for (const KernelTile& tile : kConvSweep) {
    (void)device
        .ask(CutlassConv{.shape = layers[0],
                         .x = tensors[0][0],
                         .w = tensors[0][1],
                         .y = tensors[0][2],
                         .tile = tile,
                         .when_compiling = WhenCompiling::unavailable})
        .wait();
  }
  for (const KernelTile& tile : kGroupedSweep) {
    grouped.tile = tile;
    grouped.when_compiling = WhenCompiling::wait;
    const double us = pipelined_micros(
        device, [&] { return device.ask(grouped); }, 5);
    row("tiles", fmt::format("bf16 moe 32 groups sum M {}", total_m), to_string(tile), "TFLOP/s", tflops(flops, us));
  }
  for (std::size_t i = 0; i < std::size(layers); ++i) {
    const ConvShape& s = layers[i];
    const double conv_flops = 2.0 * s.n * s.input[0] * s.input[1] * s.k * s.c * s.filter[0] * s.filter[1];
    for (const KernelTile& tile : kConvSweep) {
      const CutlassConv conv{.shape = s, .x = tensors[i][0], .w = tensors[i][1], .y = tensors[i][2], .tile = tile};
      const double us = pipelined_micros(device, [&] { return device.ask(conv); });
      row("tiles", fmt::format("conv {}x{} {}->{} @{}", s.filter[0], s.filter[1], s.c, s.k, s.input[0]),
          to_string(tile), "TFLOP/s", tflops(conv_flops, us));
    }
  }
}

}  // namespace accel::bench

// A gated MLP's first half on one GPU: the [rows, 2 width] gate|up product by cuBLASLt followed by the gated pass
// (what a compiled graph ran before docs/PERFORMANCE.md §73, and still runs below 2,048 rows or off sm_90), against
// the one fused GEMM of cuda_gated_matmul.cu that writes only act(gate) * up, in each of its scheduler's swizzles (at
// 4,096 rows or more) and raster orders; last, the fastest of them. cuBLASLt's product takes the fastest of its
// heuristic's first 16 candidates, each timed, as the graphs' timed plans do (§60); its pick's tile is printed. Shapes:
// Qwen3-0.6B's MLP (k 1,024, width 3,072, bf16, SiLU) and a 12 × 768 rotary encoder's (k 768, width 3,072, f16, exact
// GELU), at 16,384 to 64 rows by default. Also the largest difference of each against a double-precision reference
// over sampled rows, so that a faster wrong kernel cannot pass.
//   gated_matmul_bench [rows,...]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "common/csv_report.hpp"
#include "common/cuda_timing.hpp"
#include "common/half_products.hpp"
#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cuda_gated_matmul.hpp"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::bench {
namespace {

struct Shape {
  const char* name;
  DType dtype;
  Activation activation;
  std::int64_t k, width;
};

// The largest |y - reference| over every 97th row, relative to the largest |reference| there.
double error_against_reference(const Shape& s, std::int64_t rows, const std::vector<float>& x,
                               const std::vector<float>& w_stacked, const std::vector<float>& y) {
  double worst = 0, scale = 0;
  for (std::int64_t r = 0; r < rows; r += 97) {
    for (std::int64_t c = 0; c < s.width; ++c) {
      double gate = 0, up = 0;
      for (std::int64_t i = 0; i < s.k; ++i) {
        gate += double{x[r * s.k + i]} * w_stacked[c * s.k + i];
        up += double{x[r * s.k + i]} * w_stacked[(s.width + c) * s.k + i];
      }
      const double reference = accel::activate(s.activation, gate) * up;
      worst = std::max(worst, std::abs(reference - y[r * s.width + c]));
      scale = std::max(scale, std::abs(reference));
    }
  }
  return worst / scale;
}

void measure(const Shape& s, std::int64_t rows, cudaStream_t stream) {
  std::mt19937 rng(static_cast<unsigned>(rows));
  std::vector<float> x = uniform(static_cast<std::size_t>(rows * s.k), 1.0f, rng);
  std::vector<float> w_stacked = uniform(static_cast<std::size_t>(2 * s.width * s.k), 2.0f / std::sqrt(s.k), rng);
  std::vector<float> w_interleaved(w_stacked.size());
  for (std::int64_t r = 0; r < 2 * s.width; ++r)
    std::copy_n(&w_stacked[graph::cuda::gated_matmul_weight_row(r, s.width) * s.k], s.k, &w_interleaved[r * s.k]);
  void* dx = upload(x, s.dtype);
  void* dw = upload(w_stacked, s.dtype);
  void* dwi = upload(w_interleaved, s.dtype);
  void *product = nullptr, *y = nullptr;
  const std::size_t element = size_of(s.dtype);
  check_cuda(cudaMalloc(&product, static_cast<std::size_t>(rows * 2 * s.width) * element), "cudaMalloc");
  check_cuda(cudaMalloc(&y, static_cast<std::size_t>(rows * s.width) * element), "cudaMalloc");
  const std::string name = fmt::format("{} rows {}", s.name, rows);
  const double flops = 2.0 * static_cast<double>(rows) * static_cast<double>(2 * s.width) * static_cast<double>(s.k);

  LtProduct lt(s.dtype, rows, 2 * s.width, s.k, dx, dw, product, stream);
  const auto unfused = [&] {
    const cudaError_t status = lt.run(dx, dw, product, stream);
    return status != cudaSuccess ? status
                                 : graph::cuda::gated(s.dtype, product, rows, s.width, s.activation, y, stream);
  };
  const double product_us = median_us_per_call(stream, 20, "cuBLASLt", [&] { return lt.run(dx, dw, product, stream); });
  const double unfused_us = median_us_per_call(stream, 20, "cuBLASLt + gated", unfused);
  check_cuda(cudaStreamSynchronize(stream), "sync");
  row("gated_matmul", name, "cuBLASLt product alone", "us", product_us);
  row("gated_matmul", name, "cuBLASLt + gated", "us", unfused_us);
  row("gated_matmul", name, "cuBLASLt + gated", "error x1e6",
      1e6 * error_against_reference(s, rows, x, w_stacked, download(y, rows * s.width, s.dtype)));
  using graph::cuda::GatedMatmulRaster;
  const std::pair<GatedMatmulRaster, const char*> rasters[] = {{GatedMatmulRaster::heuristic, "heuristic"},
                                                               {GatedMatmulRaster::along_m, "along m"},
                                                               {GatedMatmulRaster::along_n, "along n"}};
  double best_us = 1e30;
  std::string best;
  // The scheduler's swizzles only where there are many tiles to order.
  for (const int swizzle : rows >= 4096 ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1}) {
    for (const auto& [raster, raster_name] : rasters) {
      const graph::cuda::GatedMatmulTuning tuning{.swizzle = swizzle, .raster = raster};
      const std::string variant = fmt::format("fused swizzle {} raster {}", swizzle, raster_name);
      check_cuda(cudaMemset(y, 0, static_cast<std::size_t>(rows * s.width) * element), "memset");
      const double us = median_us_per_call(stream, 20, "fused", [&] {
        return graph::cuda::gated_matmul(s.dtype, s.activation, dx, dwi, rows, s.width, s.k, y, stream, tuning);
      });
      check_cuda(cudaStreamSynchronize(stream), "sync");
      row("gated_matmul", name, variant, "us", us);
      if (us < best_us) best_us = us, best = variant;
      if (swizzle == 1 && raster == GatedMatmulRaster::heuristic) {
        row("gated_matmul", name, variant, "TFLOP/s", flops / (us * 1e6));
        row("gated_matmul", name, variant, "error x1e6",
            1e6 * error_against_reference(s, rows, x, w_stacked, download(y, rows * s.width, s.dtype)));
      }
    }
  }
  row("gated_matmul", name, "best fused: " + best, "us", best_us);
  row("gated_matmul", name, "best fused: " + best, "vs unfused", unfused_us / best_us);
  for (void* p : {dx, dw, dwi, product, y}) cudaFree(p);
}

}  // namespace
}  // namespace accel::bench

int main(int argc, char** argv) {
  using namespace accel;
  std::vector<std::int64_t> rows = {16384, 4096, 1024, 256, 64};
  if (argc > 1) {
    rows.clear();
    for (const std::string& item : bench::split_list(argv[1])) rows.push_back(std::stoll(item));
  }
  cudaStream_t stream{};
  bench::check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  const bench::Shape shapes[] = {{"qwen3-0.6b mlp bf16 silu", DType::bf16, Activation::silu, 1024, 3072},
                                 {"12x768 encoder mlp f16 gelu", DType::f16, Activation::gelu_erf, 768, 3072}};
  for (const bench::Shape& shape : shapes)
    for (std::int64_t r : rows) bench::measure(shape, r, stream);
  return 0;
}

// A gated MLP's first half on one GPU: the [rows, 2 width] gate|up product by cuBLASLt followed by the gated pass
// (what a compiled graph ran before docs/PERFORMANCE.md §73, and still runs below 2,048 rows or off sm_90), against
// the one fused GEMM of cuda_gated_matmul.cu that writes only act(gate) * up, in each of its scheduler's swizzles (at
// 4,096 rows or more) and raster orders; last, the fastest of them. cuBLASLt's product takes the fastest of its
// heuristic's first 16 candidates, each timed, as the graphs' timed plans do (§60); its pick's tile is printed. Shapes:
// Qwen3-0.6B's MLP (k 1,024, width 3,072, bf16, SiLU) and a 12 × 768 rotary encoder's (k 768, width 3,072, f16, exact
// GELU), at 16,384 to 64 rows by default. Also the largest difference of each against a double-precision reference
// over sampled rows, so that a faster wrong kernel cannot pass.
//   gated_matmul_bench [rows,...]
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "common/csv_report.hpp"
#include "common/cuda_timing.hpp"
#include "common/exit_now.hpp"
#include "graph/kernels/cpu_kernels.hpp"
#include "graph/kernels/cuda_gated_matmul.hpp"
#include "graph/kernels/cuda_kernels.hpp"

namespace accel::bench {
namespace {

void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cuBLASLt status %d\n", what, static_cast<int>(status));
    exit_now(1);
  }
}

struct Shape {
  const char* name;
  DType dtype;
  Activation activation;
  std::int64_t k, width;
};

std::vector<float> uniform(std::size_t count, float bound, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-bound, bound);
  std::vector<float> values(count);
  for (float& v : values) v = dist(rng);
  return values;
}

// Rounds `values` to `dtype` in place and returns the device copy.
void* upload(std::vector<float>& values, DType dtype) {
  std::vector<std::byte> stored(values.size() * size_of(dtype));
  const auto count = static_cast<std::int64_t>(values.size());
  if (!graph::cpu::cast(DType::f32, values.data(), dtype, stored.data(), count) ||
      !graph::cpu::cast(dtype, stored.data(), DType::f32, values.data(), count))
    exit_now(1);
  void* device = nullptr;
  check_cuda(cudaMalloc(&device, stored.size()), "cudaMalloc");
  check_cuda(cudaMemcpy(device, stored.data(), stored.size(), cudaMemcpyHostToDevice), "upload");
  return device;
}

std::vector<float> download(const void* device, std::size_t count, DType dtype) {
  std::vector<std::byte> stored(count * size_of(dtype));
  check_cuda(cudaMemcpy(stored.data(), device, stored.size(), cudaMemcpyDeviceToHost), "download");
  std::vector<float> values(count);
  if (!graph::cpu::cast(dtype, stored.data(), DType::f32, values.data(), static_cast<std::int64_t>(count))) exit_now(1);
  return values;
}

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

// cuBLASLt's D [rows, 2 width] = x Wᵀ (column-major: Dᵀ = W xᵀ), the fastest of its first 16 candidates.
struct LtProduct {
  cublasLtHandle_t handle{};
  cublasLtMatmulDesc_t desc{};
  cublasLtMatrixLayout_t lw{}, lx{}, ld{};
  cublasLtMatmulAlgo_t algo{};
  void* workspace = nullptr;
  std::size_t workspace_bytes = 32 << 20;
  float alpha = 1, beta = 0;

  LtProduct(DType dtype, std::int64_t rows, std::int64_t n, std::int64_t k, const void* x, const void* w, void* d,
            cudaStream_t stream) {
    const cudaDataType type = dtype == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
    check_lt(cublasLtCreate(&handle), "cublasLtCreate");
    check_cuda(cudaMalloc(&workspace, workspace_bytes), "workspace");
    check_lt(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc");
    const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
    check_lt(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose), "ta");
    check_lt(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none), "tb");
    check_lt(cublasLtMatrixLayoutCreate(&lw, type, k, n, k), "layout w");
    check_lt(cublasLtMatrixLayoutCreate(&lx, type, k, rows, k), "layout x");
    check_lt(cublasLtMatrixLayoutCreate(&ld, type, n, rows, n), "layout d");
    cublasLtMatmulPreference_t preference{};
    check_lt(cublasLtMatmulPreferenceCreate(&preference), "preference");
    const std::uint64_t limit = workspace_bytes;
    check_lt(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit,
                                                  sizeof limit),
             "preference workspace");
    cublasLtMatmulHeuristicResult_t results[16]{};
    int found = 0;
    check_lt(cublasLtMatmulAlgoGetHeuristic(handle, desc, lw, lx, ld, ld, preference, 16, results, &found),
             "heuristic");
    cublasLtMatmulPreferenceDestroy(preference);
    if (found == 0) exit_now(1);
    double best = 1e30;
    for (int i = 0; i < found; ++i) {
      const double us = median_us_per_call(stream, 20, "candidate", [&] {
        return cublasLtMatmul(handle, desc, &alpha, w, lw, x, lx, &beta, d, ld, d, ld, &results[i].algo, workspace,
                              workspace_bytes, stream) == CUBLAS_STATUS_SUCCESS
                   ? cudaSuccess
                   : cudaErrorUnknown;
      });
      if (us < best) best = us, algo = results[i].algo;
    }
    int tile = 0, stages = 0, swizzle = 0, cluster = 0;
    std::size_t written = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &written);
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &written);
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle, &written);
    cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster,
                                         &written);
    std::printf("# cuBLASLt's fastest: tile id %d, stages id %d, swizzle %d, cluster shape id %d (of %d candidates)\n",
                tile, stages, swizzle, cluster, found);
  }
  cudaError_t run(const void* x, const void* w, void* d, cudaStream_t stream) {
    return cublasLtMatmul(handle, desc, &alpha, w, lw, x, lx, &beta, d, ld, d, ld, &algo, workspace, workspace_bytes,
                          stream) == CUBLAS_STATUS_SUCCESS
               ? cudaGetLastError()
               : cudaErrorUnknown;
  }
};

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

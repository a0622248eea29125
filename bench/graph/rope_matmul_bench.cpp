// A decoder's packed q|k|v projection and its rope on one GPU: cuBLASLt's product (the fastest of its heuristic's
// first 16 candidates, each timed, as the graphs' timed plans take it) followed by cuda::rope with the q/k norms over
// it in place (what a compiled graph ran before docs/PERFORMANCE.md §77, and still runs below 2,048 rows or off
// sm_90), against the one GEMM of cuda_rope_matmul.cu that writes the rotated product, in each of its scheduler's
// swizzles (at 4,096 rows or more) and raster orders; last, the fastest of them. Shape: Qwen3-0.6B's (k 1,024, 16
// query and 8 key/value heads of 128, q/k norms, bf16), at 16,384 to 2,048 rows by default, positions as a batch of
// 256-token passages has them. Also the largest difference between the two, relative to the largest value, so that a
// faster wrong kernel cannot pass.
//   rope_matmul_bench [rows,...]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "common/csv_report.hpp"
#include "common/cuda_timing.hpp"
#include "common/exit_now.hpp"
#include "graph/kernels/cuda_kernels.hpp"
#include "graph/kernels/cuda_rope_matmul.hpp"
#include "graph/lt_product.hpp"

namespace accel::bench {
namespace {

constexpr DType kType = DType::bf16;
constexpr int kHeads = 16, kKvHeads = 8, kHeadDim = 128;
constexpr std::int64_t kInput = 1024, kColumns = std::int64_t{kHeads + 2 * kKvHeads} * kHeadDim;
constexpr float kTheta = 1e6f, kEps = 1e-6f;

double largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, double{std::abs(a[i] - b[i])});
    scale = std::max(scale, double{std::abs(b[i])});
  }
  return worst / scale;
}

void measure(std::int64_t rows, cudaStream_t stream) {
  std::mt19937 rng(static_cast<unsigned>(rows));
  std::vector<float> x = uniform(static_cast<std::size_t>(rows * kInput), 1.0f, rng);
  std::vector<float> w = uniform(static_cast<std::size_t>(kColumns * kInput), 2.0f / std::sqrt(kInput), rng);
  std::vector<float> gammas = uniform(2 * kHeadDim, 0.5f, rng);
  for (float& g : gammas) g += 1.0f;
  void* dx = upload(x, kType);
  void* dw = upload(w, kType);
  void* dgamma = upload(gammas, kType);
  const void* q_norm = dgamma;
  const void* k_norm = static_cast<const std::byte*>(dgamma) + kHeadDim * size_of(kType);
  std::vector<std::int32_t> positions(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) positions[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(r % 256);
  void* dpositions = nullptr;
  check_cuda(cudaMalloc(&dpositions, positions.size() * 4), "cudaMalloc");
  check_cuda(cudaMemcpy(dpositions, positions.data(), positions.size() * 4, cudaMemcpyHostToDevice), "upload");
  const auto* pos = static_cast<const std::int32_t*>(dpositions);
  void *product = nullptr, *y = nullptr;
  const std::size_t bytes = static_cast<std::size_t>(rows * kColumns) * size_of(kType);
  check_cuda(cudaMalloc(&product, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&y, bytes), "cudaMalloc");
  const std::string name = fmt::format("qwen3-0.6b q|k|v bf16 rows {}", rows);
  const double flops = 2.0 * static_cast<double>(rows) * static_cast<double>(kColumns) * static_cast<double>(kInput);

  LtProduct lt(kType, rows, kColumns, kInput, dx, dw, product, stream);
  const auto rope = [&] {
    return graph::cuda::rope(kType, product, pos, rows, kHeads, kHeadDim, kTheta, product, stream, kKvHeads, q_norm,
                             k_norm, kEps);
  };
  const auto unfused = [&] {
    const cudaError_t status = lt.run(dx, dw, product, stream);
    return status != cudaSuccess ? status : rope();
  };
  const double product_us = median_us_per_call(stream, 20, "cuBLASLt", [&] { return lt.run(dx, dw, product, stream); });
  const double rope_us = median_us_per_call(stream, 20, "rope", rope);
  const double unfused_us = median_us_per_call(stream, 20, "cuBLASLt + rope", unfused);
  check_cuda(unfused(), "unfused");
  check_cuda(cudaStreamSynchronize(stream), "sync");
  const std::vector<float> reference = download(product, static_cast<std::size_t>(rows * kColumns), kType);
  row("rope_matmul", name, "cuBLASLt product alone", "us", product_us);
  row("rope_matmul", name, "cuBLASLt product alone", "TFLOP/s", flops / (product_us * 1e6));
  row("rope_matmul", name, "rope alone (in place)", "us", rope_us);
  row("rope_matmul", name, "cuBLASLt + rope", "us", unfused_us);
  const graph::cuda::RopeMatmulHeads heads{.heads = kHeads,
                                           .kv_heads = kKvHeads,
                                           .head_dim = kHeadDim,
                                           .theta = kTheta,
                                           .positions = pos,
                                           .query_norm = q_norm,
                                           .key_norm = k_norm,
                                           .eps = kEps};
  using graph::cuda::TileRaster;
  const std::pair<TileRaster, const char*> rasters[] = {
      {TileRaster::heuristic, "heuristic"}, {TileRaster::along_m, "along m"}, {TileRaster::along_n, "along n"}};
  double best_us = 1e30;
  std::string best;
  for (const int variant : {0, 1, 2, 3, 4, 5, 6, 7})
    for (const int swizzle : rows >= 4096 ? std::vector<int>{1} : std::vector<int>{1}) {
      for (const auto& [raster, raster_name] : rasters) {
        const graph::cuda::TileSchedule schedule{.swizzle = swizzle, .raster = raster, .variant = variant};
        const std::string label = fmt::format("fused variant {} swizzle {} raster {}", variant, swizzle, raster_name);
        check_cuda(cudaMemset(y, 0, bytes), "memset");
        const double us = median_us_per_call(stream, 20, "fused", [&] {
          return graph::cuda::rope_matmul(kType, dx, dw, nullptr, rows, kInput, heads, y, stream, schedule);
        });
        check_cuda(cudaStreamSynchronize(stream), "sync");
        row("rope_matmul", name, label, "us", us);
        if (us < best_us) best_us = us, best = label;
        if (swizzle == 1 && raster == TileRaster::heuristic) {
          row("rope_matmul", name, label, "TFLOP/s", flops / (us * 1e6));
          row("rope_matmul", name, label, "difference x1e6",
              1e6 * largest_difference(download(y, static_cast<std::size_t>(rows * kColumns), kType), reference));
        }
      }
    }
  row("rope_matmul", name, "best fused: " + best, "us", best_us);
  row("rope_matmul", name, "best fused: " + best, "vs unfused", unfused_us / best_us);
  for (void* p : {dx, dw, dgamma, dpositions, product, y}) cudaFree(p);
}

}  // namespace
}  // namespace accel::bench

int main(int argc, char** argv) {
  using namespace accel;
  std::vector<std::int64_t> rows = {16384, 4096, 2048};
  if (argc > 1) {
    rows.clear();
    for (const std::string& item : bench::split_list(argv[1])) rows.push_back(std::stoll(item));
  }
  cudaStream_t stream{};
  bench::check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  for (std::int64_t r : rows) bench::measure(r, stream);
  return 0;
}

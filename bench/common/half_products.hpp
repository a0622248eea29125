// What the half-precision product benchmarks share (gated_matmul_bench, few_rows_matmul_bench): random values rounded
// to the storage type and their device copies, and cuBLASLt's product D = x Wᵀ in the plan a compiled graph would
// time for it (the fastest of its heuristic's first 16 candidates, as the graphs' timed plans choose, §60).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <random>
#include <vector>

#include "accel/core/dtype.hpp"
#include "common/cuda_checks.hpp"
#include "common/cuda_timing.hpp"
#include "common/exit_now.hpp"
#include "graph/kernels/cpu_kernels.hpp"

namespace accel::bench {

inline std::vector<float> uniform(std::size_t count, float bound, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-bound, bound);
  std::vector<float> values(count);
  for (float& v : values) v = dist(rng);
  return values;
}

// Rounds `values` to `dtype` in place and returns the device copy.
inline void* upload(std::vector<float>& values, DType dtype) {
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

inline std::vector<float> download(const void* device, std::size_t count, DType dtype) {
  std::vector<std::byte> stored(count * size_of(dtype));
  check_cuda(cudaMemcpy(stored.data(), device, stored.size(), cudaMemcpyDeviceToHost), "download");
  std::vector<float> values(count);
  if (!graph::cpu::cast(dtype, stored.data(), DType::f32, values.data(), static_cast<std::int64_t>(count))) exit_now(1);
  return values;
}

// cuBLASLt's D [rows, n] = x Wᵀ (column-major: Dᵀ = W xᵀ), the fastest of its first 16 candidates, timed on the
// operands given.
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

}  // namespace accel::bench

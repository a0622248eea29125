// The raw cuBLASLt call a user would write, set up once on a stream of its own, and random inputs of any GEMM dtype:
// the peer of accel's GEMMs in cuda_gemm_bench and small_gemm_bench.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "accel/core/dtype.hpp"
#include "accel/libs/blas/gemm.hpp"
#include "common/cuda_checks.hpp"
#include "common/exit_now.hpp"

namespace accel::bench {

// Row-major C (m x n) = A (m x k) op(B): op(B) = B (k x n), or Bᵀ with B stored n x k when b_transposed.
struct DirectGemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  DType input = DType::f32, output = DType::f32;
  GemmCompute compute = GemmCompute::standard;
  bool b_transposed = false;
};

inline cudaDataType cuda_type(DType d) {
  switch (d) {
    case DType::f32: return CUDA_R_32F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::fp8_e4m3: return CUDA_R_8F_E4M3;
    default: return CUDA_R_32F;
  }
}

// Random bits of the input dtype, never zeros.
inline std::vector<std::byte> random_elements(DType dtype, std::size_t count, std::mt19937_64& rng) {
  std::vector<std::byte> bytes(count * size_of(dtype));
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (std::size_t i = 0; i < count; ++i) {
    const float v = uniform(rng);
    std::byte* at = bytes.data() + i * size_of(dtype);
    switch (dtype) {
      case DType::f16: {
        Half h = to_half(v);
        std::memcpy(at, &h, 2);
        break;
      }
      case DType::bf16: {
        BFloat16 b = to_bfloat16(v);
        std::memcpy(at, &b, 2);
        break;
      }
      case DType::fp8_e4m3: {
        Float8E4M3 f = to_float8_e4m3(v);
        std::memcpy(at, &f, 1);
        break;
      }
      default: std::memcpy(at, &v, 4);
    }
  }
  return bytes;
}

// The raw library call: one cuBLASLt matmul on one stream, set up once, as a user would write it.
struct DirectGemm {
  cublasLtHandle_t handle{};
  cublasLtMatmulDesc_t desc{};
  cublasLtMatrixLayout_t la{}, lb{}, lc{};
  cublasLtMatmulAlgo_t algo{};
  void *a{}, *b{}, *c{}, *workspace{};
  std::size_t workspace_bytes = 32 << 20;
  cudaStream_t stream{};
  float alpha = 1, beta = 0;

  DirectGemm(const DirectGemmShape& p, const std::vector<std::byte>& a_host, const std::vector<std::byte>& b_host) {
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    check_lt(cublasLtCreate(&handle), "cublasLtCreate");
    const std::size_t in = size_of(p.input), out = size_of(p.output);
    check_cuda(cudaMalloc(&a, p.m * p.k * in), "malloc a");
    check_cuda(cudaMalloc(&b, p.k * p.n * in), "malloc b");
    check_cuda(cudaMalloc(&c, p.m * p.n * out), "malloc c");
    check_cuda(cudaMalloc(&workspace, workspace_bytes), "malloc workspace");
    check_cuda(cudaMemcpy(a, a_host.data(), p.m * p.k * in, cudaMemcpyHostToDevice), "copy a");
    check_cuda(cudaMemcpy(b, b_host.data(), p.k * p.n * in, cudaMemcpyHostToDevice), "copy b");
    const cublasComputeType_t compute =
        p.compute == GemmCompute::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    check_lt(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F), "desc");
    // Column-major Cᵀ (n×m) = op(B)ᵀ Aᵀ: cuBLASLt's first operand is B.
    const cublasOperation_t ta = p.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
    check_lt(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)), "transa");
    check_lt(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)), "transb");
    if (p.b_transposed)
      check_lt(cublasLtMatrixLayoutCreate(&la, cuda_type(p.input), p.k, p.n, p.k), "layout b");
    else
      check_lt(cublasLtMatrixLayoutCreate(&la, cuda_type(p.input), p.n, p.k, p.n), "layout b");
    check_lt(cublasLtMatrixLayoutCreate(&lb, cuda_type(p.input), p.k, p.m, p.k), "layout a");
    check_lt(cublasLtMatrixLayoutCreate(&lc, cuda_type(p.output), p.n, p.m, p.n), "layout c");
    cublasLtMatmulPreference_t pref{};
    check_lt(cublasLtMatmulPreferenceCreate(&pref), "pref");
    const std::uint64_t limit = workspace_bytes;
    check_lt(
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit)),
        "pref workspace");
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    check_lt(cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, lc, pref, 1, &result, &found), "heuristic");
    if (found == 0) accel::bench::exit_now(1);
    algo = result.algo;
    cublasLtMatmulPreferenceDestroy(pref);
  }
  ~DirectGemm() {
    cudaStreamSynchronize(stream);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(handle);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(workspace);
    cudaStreamDestroy(stream);
  }
  void enqueue() {
    check_lt(cublasLtMatmul(handle, desc, &alpha, b, la, a, lb, &beta, c, lc, c, lc, &algo, workspace, workspace_bytes,
                            stream),
             "cublasLtMatmul");
  }
  void sync() { check_cuda(cudaStreamSynchronize(stream), "sync"); }
};

}  // namespace accel::bench

// A cuBLASLt plan's parts (private to cublaslt_gemm.cpp and cublaslt_timing.cpp): the descriptors and layouts of
// one resolved shape, the algorithms cuBLASLt's heuristic offers for it, and the one that runs.
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "libs/blas/cublaslt_gemm.hpp"
#include "libs/blas/cublaslt_library.hpp"

namespace accel::blas {

// How many of the heuristic's algorithms a plan keeps to time (cuBLASLt offers up to 8 for the encoders' shapes).
inline constexpr std::size_t kPlanCandidates = 8;

struct CublasLtGemm::Plan {
  bool swapped = false;
  cudaDataType scale_type = CUDA_R_32F;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr;
  cublasLtMatrixLayout_t b = nullptr;
  cublasLtMatrixLayout_t c = nullptr;
  std::vector<cublasLtMatmulAlgo_t> candidates;  // the heuristic's order: its first choice first
  // The algorithm that runs: the heuristic's first choice until the run CublasLtGemm::Timing picks times them and
  // keeps the fastest (cublaslt_timing.cpp). Written while the plan is const, as the bias pointer in `desc` is: a
  // plan belongs to one stream's cache, and a stream is one device actor's state, whose requests run one at a time.
  mutable cublasLtMatmulAlgo_t algo{};
  mutable bool timed = false;
  mutable std::uint32_t runs = 0;  // until timed
  const CublasLtApi& api;

  explicit Plan(const CublasLtApi& library) : api(library) {}
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (a) api.cublasLtMatrixLayoutDestroy(a);
    if (b) api.cublasLtMatrixLayoutDestroy(b);
    if (c) api.cublasLtMatrixLayoutDestroy(c);
    if (desc) api.cublasLtMatmulDescDestroy(desc);
  }
};

}  // namespace accel::blas

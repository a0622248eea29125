// GEMM on CUDA through cuBLASLt, with a per-stream LRU cache of plans (descriptors, layouts and the algorithm
// chosen: the heuristic's candidates, timed once the plan's runs are worth it, see Timing) keyed by the resolved
// GemmShape — sizes, layouts, dtypes, compute mode and epilogue. A cache belongs to one stream of one device, so the
// device is part of its key by construction.
//
// cuBLASLt is column-major. A row-major C = op(A) op(B) is computed as the column-major Cᵀ = op(B)ᵀ op(A)ᵀ:
// the operands swap and each stored matrix is read as its own transpose, so nothing is copied. The bias
// vector runs along C's contiguous dimension in both orders, which is what cuBLASLt's bias epilogue expects.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <memory>

#include "accel/core/cache_stats.hpp"
#include "accel/libs/blas/gemm.hpp"
#include "cache/cache.hpp"
#include "libs/blas/cublaslt_library.hpp"
#include "libs/blas/gemm_operation.hpp"

namespace accel::blas {

// not_supported, with the reason, for what cuBLASLt cannot do here: dtype combinations, fp8 without sm_89+
// or outside the "TN" layout with sizes multiple of 16.
[[nodiscard]] Status check_cublaslt_support(const GemmGeometry& geometry, int compute_capability);

class CublasLtGemm {
 public:
  // `workspace` (from the device's pool) stays owned by the caller and must outlive this object. Loads cuBLASLt
  // if it is not loaded yet.
  static Result<std::unique_ptr<CublasLtGemm>> create(std::size_t plan_capacity, void* workspace,
                                                      std::size_t workspace_bytes);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  struct Plan;
  // The plan of a checked GEMM (plan_gemm_geometry and check_cublaslt_support passed): cached, or built.
  [[nodiscard]] Result<std::shared_ptr<const Plan>> plan(const GemmGeometry& geometry);
  // When a plan's candidate algorithms are timed (a run with beta = 0 or a separate addend, on a stream that is not
  // capturing): at its
  // first run, for a compiled graph's steps, which are captured after that run and replayed from then on; or once
  // it has run kRunsBeforeTiming times, for requests, so that a shape asked for once or twice does not pay for the
  // timing (1.5 ms for a small product, 15-20 ms for a process's first, which loads the candidates' kernels).
  enum class Timing { first_run, once_reused };
  static constexpr std::uint32_t kRunsBeforeTiming = 8;
  // Enqueues the GEMM of `plan` on resolved operands.
  [[nodiscard]] Status run(const Plan& plan, const GemmGeometry& geometry, const GemmOperands& operands, double alpha,
                           double beta, cudaStream_t stream, Timing timing = Timing::once_reused);
  // plan(), then run().
  [[nodiscard]] Status enqueue(const GemmGeometry& geometry, const GemmOperands& operands, double alpha, double beta,
                               cudaStream_t stream);

  // "cublaslt-plans", this stream's.
  [[nodiscard]] CacheStats stats() const { return plans_->stats(); }

 private:
  CublasLtGemm(const CublasLtApi& api, cublasLtHandle_t handle, std::size_t capacity, void* workspace,
               std::size_t workspace_bytes);
  Result<std::shared_ptr<const Plan>> build_plan(const GemmGeometry& geometry) const;
  // A run's operands in cuBLASLt's order (A and B swapped where the plan says so): D written over C, or C read from
  // a separate addend.
  struct LtOperands {
    const void* a;
    const void* b;
    const void* c;
    void* d;
    const void* alpha;
    const void* beta;
  };
  // Times the plan's candidates on these operands and sets plan.algo to the fastest (cublaslt_timing.cpp); a
  // stream that captures is left untimed. Only for a run that writes the same D when repeated (beta = 0, or C apart
  // from D).
  Status time_candidates(const Plan& plan, const LtOperands& operands, cudaStream_t stream) const;
  // One cublasLtMatmul of `plan` with `algo`.
  cublasStatus_t matmul(const Plan& plan, const LtOperands& operands, const cublasLtMatmulAlgo_t& algo,
                        cudaStream_t stream) const;

  const CublasLtApi& api_;
  cublasLtHandle_t handle_;
  void* workspace_;
  const std::size_t workspace_bytes_;
  std::unique_ptr<cache::Cache<Plan>> plans_;  // reset before the handle is destroyed
};

}  // namespace accel::blas

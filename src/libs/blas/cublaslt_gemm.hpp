// GEMM on CUDA through cuBLASLt, with a per-stream LRU cache of plans (descriptors, layouts and the algorithm
// the heuristic chose) keyed by the resolved GemmShape — sizes, layouts, dtypes, compute mode and epilogue.
// A cache belongs to one stream of one device, so the device is part of its key by construction.
//
// cuBLASLt is column-major. A row-major C = op(A) op(B) is computed as the column-major Cᵀ = op(B)ᵀ op(A)ᵀ:
// the operands swap and each stored matrix is read as its own transpose, so nothing is copied. The bias
// vector runs along C's contiguous dimension in both orders, which is what cuBLASLt's bias epilogue expects.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "accel/device/requests.hpp"
#include "accel/libs/blas/gemm.hpp"
#include "libs/blas/gemm_operation.hpp"

namespace accel::blas {

// not_supported, with the reason, for what cuBLASLt cannot do here: dtype combinations, fp8 without sm_89+
// or outside the "TN" layout with sizes multiple of 16.
[[nodiscard]] Status check_cublaslt_support(const GemmGeometry& geometry, int compute_capability);

[[nodiscard]] std::string cublaslt_library();

class CublasLtGemm {
 public:
  // `workspace` (from the device's pool) stays owned by the caller and must outlive this object.
  static Result<std::unique_ptr<CublasLtGemm>> create(std::size_t plan_capacity, void* workspace,
                                                      std::size_t workspace_bytes);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  struct Plan;
  // The plan of a checked GEMM (plan_gemm_geometry and check_cublaslt_support passed): cached, or built.
  [[nodiscard]] Result<Plan*> plan(const GemmGeometry& geometry);
  // Enqueues the GEMM of `plan` on resolved operands.
  [[nodiscard]] Status run(Plan& plan, const GemmGeometry& geometry, const GemmOperands& operands, double alpha,
                           double beta, cudaStream_t stream);
  // plan(), then run().
  [[nodiscard]] Status enqueue(const GemmGeometry& geometry, const GemmOperands& operands, double alpha, double beta,
                               cudaStream_t stream);

  [[nodiscard]] PlanCacheStats stats() const noexcept;

 private:
  struct ShapeHash {
    std::size_t operator()(const GemmShape& shape) const noexcept;
  };

  CublasLtGemm(cublasLtHandle_t handle, std::size_t capacity, void* workspace, std::size_t workspace_bytes);

  cublasLtHandle_t handle_;
  const std::size_t capacity_;
  void* workspace_;
  const std::size_t workspace_bytes_;
  std::list<std::unique_ptr<Plan>> recent_;  // most recently used first
  std::unordered_map<GemmShape, std::list<std::unique_ptr<Plan>>::iterator, ShapeHash> index_;
  PlanCacheStats stats_;
};

}  // namespace accel::blas

// sparse::SpMV and sparse::SpMM on a CUDA stream: cuSPARSE's SpMV (with its preprocessing) and SpMM over the
// analysis kept for the matrix's structure (cusparse_state.hpp), after the structural check where one is due. A
// blocked-ELL A is multiplied by CUSPARSE_SPMM_BLOCKED_ELL_ALG1 (sparse.hpp says what it allows).
#pragma once

#include "libs/sparse/cusparse_state.hpp"
#include "libs/sparse/product_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<sparse::SpMV> {
  using Plan = sparse::SparsePlan;
  using Checked = Operation<sparse::SpMV>::Checked;

  static Result<Plan> plan(const sparse::SpMV&, const Checked&, CudaTarget& target) {
    return sparse::plan_sparse(target);
  }
  static std::uint64_t workspace_bytes(const Plan&) { return sparse::kReportBytes; }
  static std::uint64_t host_result_bytes(const Plan&) { return sparse::kReportBytes; }
  static Status run(const sparse::SpMV& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { sparse::describe_cusparse(target, report); }
};

template <>
struct CudaOperation<sparse::SpMM> {
  using Plan = sparse::SparsePlan;
  using Checked = Operation<sparse::SpMM>::Checked;

  // A blocked-ELL A that cuSPARSE cannot multiply (i64 indices, transposed) is not_supported here.
  static Result<Plan> plan(const sparse::SpMM& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan&) { return sparse::kReportBytes; }
  static std::uint64_t host_result_bytes(const Plan&) { return sparse::kReportBytes; }
  static Status run(const sparse::SpMM& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { sparse::describe_cusparse(target, report); }
};

}  // namespace accel

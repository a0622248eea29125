// sparse::SpMV and sparse::SpMM on a CUDA stream: SpMV of a CSR matrix by our kernel (spmv_kernel.hpp), other SpMVs
// by cuSPARSE (with its preprocessing), and SpMM by cuSPARSE over the analysis kept for the matrix's structure
// (cusparse_state.hpp), each after the structural check where one is due. A blocked-ELL A is multiplied by
// CUSPARSE_SPMM_BLOCKED_ELL_ALG1 (sparse.hpp says what it allows).
#pragma once

#include "libs/sparse/cusparse_state.hpp"
#include "libs/sparse/product_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

namespace sparse {
// How an SpMV runs: by our kernel with `lanes` threads a row (spmv_kernel.hpp), or by cuSPARSE where lanes is 0.
struct SpmvPlan {
  SparsePlan sparse;
  int lanes = 0;
  std::uint64_t partials_bytes = 0;  // workspace after the structure's report, for the kernel's long rows
};
// Where the partial sums begin in an SpMV's workspace: after the structure's report, aligned for any value type.
inline constexpr std::uint64_t kPartialsOffset = 256;
static_assert(kReportBytes <= kPartialsOffset);
}  // namespace sparse

template <>
struct CudaOperation<sparse::SpMV> {
  using Plan = sparse::SpmvPlan;
  using Checked = Operation<sparse::SpMV>::Checked;

  // Our kernel takes a CSR A, not transposed, of f32 or f64 values (of fewer than 2^31 - 1 rows, for its grid): on
  // the H100 it was 1.4x faster than cuSPARSE's SpMV for power-law rows and 1.5-3 % faster for 13 to 1311 entries a
  // row (docs/PERFORMANCE.md, section 26), and 1.35x slower for a graph's hub rows (section 27). Its plan opens no
  // cuSPARSE state, and reserves workspace for the partial sums of rows it splits.
  static Result<Plan> plan(const sparse::SpMV& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) {
    return plan.partials_bytes == 0 ? sparse::kReportBytes : sparse::kPartialsOffset + plan.partials_bytes;
  }
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

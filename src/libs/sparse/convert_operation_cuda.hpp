// The sparse conversions on a CUDA stream, after the structural check: cusparseSparseToDense (its buffer kept per
// structure), and CSR <-> COO by kernels of our own (convert_kernel.hpp), for i32 and i64 indices alike, which skip
// the check of index arrays the stream has passed and nothing has written since (check_structure_once).
#pragma once

#include "libs/sparse/convert_operation.hpp"
#include "libs/sparse/cusparse_state.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<sparse::ToDense> {
  using Plan = sparse::SparsePlan;
  using Checked = Operation<sparse::ToDense>::Checked;

  static Result<Plan> plan(const sparse::ToDense&, const Checked&, CudaTarget& target) {
    return sparse::plan_sparse(target);
  }
  static std::uint64_t workspace_bytes(const Plan&) { return sparse::kReportBytes; }
  static std::uint64_t host_result_bytes(const Plan&) { return sparse::kReportBytes; }
  static Status run(const sparse::ToDense& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { sparse::describe_cusparse(target, report); }
};

template <>
struct CudaOperation<sparse::CsrToCoo> {
  using Plan = sparse::SparsePlan;
  using Checked = Operation<sparse::CsrToCoo>::Checked;

  // Kernels of our own: cuSPARSE is not loaded for them.
  static Result<Plan> plan(const sparse::CsrToCoo&, const Checked&, CudaTarget& target) {
    return sparse::plan_structure_checks(target);
  }
  static std::uint64_t workspace_bytes(const Plan&) { return sparse::kReportBytes; }
  static std::uint64_t host_result_bytes(const Plan&) { return sparse::kReportBytes; }
  static Status run(const sparse::CsrToCoo& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

template <>
struct CudaOperation<sparse::CooToCsr> {
  using Plan = sparse::SparsePlan;
  using Checked = Operation<sparse::CooToCsr>::Checked;

  // Kernels of our own: cuSPARSE is not loaded for them.
  static Result<Plan> plan(const sparse::CooToCsr&, const Checked&, CudaTarget& target) {
    return sparse::plan_structure_checks(target);
  }
  static std::uint64_t workspace_bytes(const Plan&) { return sparse::kReportBytes; }
  static std::uint64_t host_result_bytes(const Plan&) { return sparse::kReportBytes; }
  static Status run(const sparse::CooToCsr& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

}  // namespace accel

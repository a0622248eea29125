// sparse::SDDMM on a CUDA stream: cusparseSDDMM (with its preprocessing) over the analysis kept for C's structure
// (cusparse_state.hpp), after the structural check where one is due.
#pragma once

#include "libs/sparse/cusparse_state.hpp"
#include "libs/sparse/sddmm_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<sparse::SDDMM> {
  using Plan = sparse::SparsePlan;
  using Checked = Operation<sparse::SDDMM>::Checked;

  static Result<Plan> plan(const sparse::SDDMM&, const Checked&, CudaTarget& target) {
    return sparse::plan_sparse(target);
  }
  static std::uint64_t workspace_bytes(const Plan&) { return sparse::kReportBytes; }
  static std::uint64_t host_result_bytes(const Plan&) { return sparse::kReportBytes; }
  static Status run(const sparse::SDDMM& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { sparse::describe_cusparse(target, report); }
};

}  // namespace accel

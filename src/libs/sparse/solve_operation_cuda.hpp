// sparse::SpSV on a CUDA stream: cuSPARSE's SpSV, its analysis kept per structure (cusparse_state.hpp). A row of a
// non-unit A without its diagonal is not refused here (the CPU device refuses it): cuSPARSE takes it as a zero
// pivot and the solution holds infinities or NaNs.
#pragma once

#include "libs/sparse/cusparse_state.hpp"
#include "libs/sparse/solve_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<sparse::SpSV> {
  using Plan = sparse::SparsePlan;
  using Checked = Operation<sparse::SpSV>::Checked;

  static Result<Plan> plan(const sparse::SpSV&, const Checked&, CudaTarget& target) {
    return sparse::plan_sparse(target);
  }
  static std::uint64_t workspace_bytes(const Plan&) { return sparse::kReportBytes; }
  static std::uint64_t host_result_bytes(const Plan&) { return sparse::kReportBytes; }
  static Status run(const sparse::SpSV& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { sparse::describe_cusparse(target, report); }
};

}  // namespace accel

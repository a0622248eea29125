// sparse::SpGemmCount and sparse::SpGemm on a CUDA stream: cuSPARSE's SpGEMM steps (work estimation, compute,
// copy). The count multiplies into scratch and keeps the product in the stream's state (CountedProduct); the fill
// hands that memory to C's buffers, or copies it, when A, B and C's offsets are as the count left them (spgemm.hpp),
// else multiplies again. i32 indices only, as cuSPARSE's SpGEMM takes.
#pragma once

#include "libs/sparse/cusparse_state.hpp"
#include "libs/sparse/spgemm_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<sparse::SpGemmCount> {
  using Plan = sparse::SparsePlan;
  using Checked = Operation<sparse::SpGemmCount>::Checked;

  static Result<Plan> plan(const sparse::SpGemmCount& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan&) { return sparse::kReportBytes; }
  static std::uint64_t host_result_bytes(const Plan&) { return sparse::kReportBytes; }
  static Status run(const sparse::SpGemmCount& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { sparse::describe_cusparse(target, report); }
};

template <>
struct CudaOperation<sparse::SpGemm> {
  using Plan = sparse::SparsePlan;
  using Checked = Operation<sparse::SpGemm>::Checked;

  static Result<Plan> plan(const sparse::SpGemm& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan&) { return sparse::kReportBytes; }
  static std::uint64_t host_result_bytes(const Plan&) { return sparse::kReportBytes; }
  static Status run(const sparse::SpGemm& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { sparse::describe_cusparse(target, report); }
};

}  // namespace accel

// sparse::SpGemmCount and sparse::SpGemm on a CUDA stream: cuSPARSE's SpGEMM with structure reuse
// (cusparseSpGEMMreuse_*). The count runs its work estimation and nnz steps, which write C's offsets; the fill its
// copy (C's columns) and compute (C's values) steps, over the count's state when the stream's cache holds it and
// A and B are fixed, else after counting again (spgemm.hpp says when). i32 indices only, as cuSPARSE's SpGEMM takes.
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

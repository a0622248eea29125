// sparse::DenseToCsrCount and sparse::DenseToCsr on a CUDA stream: cusparseDenseToSparse. The count runs its
// analysis step, which writes the CSR's offsets; the fill runs it again (the dense matrix is data, not a structure
// to cache) and, nnz confirmed, its convert step.
#pragma once

#include "libs/sparse/cusparse_state.hpp"
#include "libs/sparse/dense_to_csr_operation.hpp"
#include "operation/cuda_operation.hpp"

namespace accel {

template <>
struct CudaOperation<sparse::DenseToCsrCount> {
  using Plan = sparse::SparsePlan;
  using Checked = Operation<sparse::DenseToCsrCount>::Checked;

  static Result<Plan> plan(const sparse::DenseToCsrCount&, const Checked&, CudaTarget& target) {
    return sparse::plan_sparse(target);
  }
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static Status run(const sparse::DenseToCsrCount& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { sparse::describe_cusparse(target, report); }
};

template <>
struct CudaOperation<sparse::DenseToCsr> {
  using Plan = sparse::SparsePlan;
  using Checked = Operation<sparse::DenseToCsr>::Checked;

  static Result<Plan> plan(const sparse::DenseToCsr&, const Checked&, CudaTarget& target) {
    return sparse::plan_sparse(target);
  }
  static std::uint64_t workspace_bytes(const Plan&) { return 0; }
  static Status run(const sparse::DenseToCsr& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { sparse::describe_cusparse(target, report); }
};

}  // namespace accel

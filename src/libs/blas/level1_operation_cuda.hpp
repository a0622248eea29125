// BLAS level 1 on a CUDA stream: cuBLAS's S, D, C and Z routines on the stream's handle (cublas_state.hpp), its Ex
// routines for f16 and bf16 (level1_narrow_cuda.hpp); the reductions write their results into the request's buffer
// through cuBLAS's device pointer mode. Copy of contiguous vectors is cudaMemcpyAsync, and Swap of contiguous f32, f64,
// c64 or c128 vectors a kernel of our own (blas_kernels.hpp), faster than cuBLAS's kernels for them.
#pragma once

#include <optional>

#include "libs/blas/blas_kernels.hpp"
#include "libs/blas/cublas_state.hpp"
#include "libs/blas/level1_operation.hpp"

namespace accel {

// Axpys of contiguous 16-bit vectors link: a burst or a recording of them runs as chains of one launch each
// (blas::launch_narrow_axpy_chain).
template <>
struct CudaOperation<blas::Axpy> : blas::CublasOperation {
  using Checked = Operation<blas::Axpy>::Checked;
  static Result<Plan> plan(const blas::Axpy&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Axpy& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  using Link = blas::NarrowAxpy;
  static std::optional<Link> link(const blas::Axpy& request, const Checked& checked, const Plan& plan,
                                  std::span<const BufferView> views);
  static Status run_linked(std::span<const Link> links, CudaRun& run);
};

template <>
struct CudaOperation<blas::Scal> : blas::CublasOperation {
  using Checked = Operation<blas::Scal>::Checked;
  static Result<Plan> plan(const blas::Scal&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Scal& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

namespace blas {
// A Dot or Asum planned: the stream's cuBLAS, and the workspace of the 16-bit kernel's blocks (blas_kernels.hpp).
struct SumPlan {
  CublasPlan cublas;
  std::uint64_t workspace_bytes = 0;
};
}  // namespace blas

template <>
struct CudaOperation<blas::Dot> {
  using Checked = Operation<blas::Dot>::Checked;
  using Plan = blas::SumPlan;
  static Result<Plan> plan(const blas::Dot& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes; }
  static Status run(const blas::Dot& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { blas::CublasOperation::describe(target, report); }
};

template <>
struct CudaOperation<blas::Nrm2> : blas::CublasOperation {
  using Checked = Operation<blas::Nrm2>::Checked;
  static Result<Plan> plan(const blas::Nrm2&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Nrm2& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

template <>
struct CudaOperation<blas::Asum> {
  using Checked = Operation<blas::Asum>::Checked;
  using Plan = blas::SumPlan;
  static Result<Plan> plan(const blas::Asum& request, const Checked& checked, CudaTarget& target);
  static std::uint64_t workspace_bytes(const Plan& plan) { return plan.workspace_bytes; }
  static Status run(const blas::Asum& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  static void describe(CudaTarget& target, LibraryReport& report) { blas::CublasOperation::describe(target, report); }
};

template <>
struct CudaOperation<blas::Iamax> : blas::CublasOperation {
  using Checked = Operation<blas::Iamax>::Checked;
  static Result<Plan> plan(const blas::Iamax&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Iamax& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

// Copies of contiguous vectors link: a burst or a recording of them runs as chains of one launch each
// (blas::launch_copy_chain).
template <>
struct CudaOperation<blas::Copy> : blas::CublasOperation {
  using Checked = Operation<blas::Copy>::Checked;
  static Result<Plan> plan(const blas::Copy&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Copy& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
  using Link = blas::ContiguousCopy;
  static std::optional<Link> link(const blas::Copy& request, const Checked& checked, const Plan& plan,
                                  std::span<const BufferView> views);
  static Status run_linked(std::span<const Link> links, CudaRun& run);
};

template <>
struct CudaOperation<blas::Swap> : blas::CublasOperation {
  using Checked = Operation<blas::Swap>::Checked;
  static Result<Plan> plan(const blas::Swap&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Swap& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

template <>
struct CudaOperation<blas::Rot> : blas::CublasOperation {
  using Checked = Operation<blas::Rot>::Checked;
  static Result<Plan> plan(const blas::Rot&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Rot& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

template <>
struct CudaOperation<blas::Iamin> : blas::CublasOperation {
  using Checked = Operation<blas::Iamin>::Checked;
  static Result<Plan> plan(const blas::Iamin&, const Checked&, CudaTarget& target) { return blas::plan_cublas(target); }
  static Status run(const blas::Iamin& request, const Checked& checked, const Plan& plan,
                    std::span<const BufferView> views, CudaRun& run);
};

}  // namespace accel

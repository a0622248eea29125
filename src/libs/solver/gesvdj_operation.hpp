// The operation contract of the Jacobi SVD (Note [The operation contract] in operation/operation.hpp):
// solver::Gesvdj, checked by dense_checks, run by LAPACKE's gesvd on the CPU device and by cuSOLVER's gesvdj or
// gesvdjBatched on CUDA (gesvdj_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/solver/dense.hpp"
#include "libs/solver/dense_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

namespace solver {
// A Gesvdj with its leading dimensions and strides resolved, and what each of its outputs spans.
struct CheckedGesvdj {
  Gesvdj request;
  std::int64_t u_cols = 0;  // m (full) or min(m, n) (thin); 0 without vectors
  std::int64_t v_cols = 0;  // n (full) or min(m, n) (thin); 0 without vectors
  std::uint64_t a_extent = 0;
  std::uint64_t s_extent = 0;
  std::uint64_t u_extent = 0;
  std::uint64_t v_extent = 0;
};
}  // namespace solver

template <>
struct Operation<solver::Gesvdj> {
  using Checked = solver::CheckedGesvdj;
  enum Slot : std::size_t { a, s, u, v, info };

  // u and v given exactly when the job asks for vectors; a finite tolerance >= 0 and at least one sweep.
  static Result<Checked> validate(const solver::Gesvdj& request);
  // A destroyed in place; every output in a buffer of its own.
  static void operands(const solver::Gesvdj& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const solver::Gesvdj& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

// The operation contract of the SVD (Note [The operation contract] in operation/operation.hpp): solver::Gesvd,
// checked by dense_checks, run by LAPACKE on the CPU device and by cuSOLVER on CUDA (svd_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/solver/dense.hpp"
#include "libs/solver/dense_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

namespace solver {
// A Gesvd with its leading dimensions and strides resolved, and what each of its outputs spans.
struct CheckedGesvd {
  Gesvd request;
  std::int64_t u_cols = 0;   // m (full) or min(m, n) (thin); 0 without U
  std::int64_t vt_rows = 0;  // n (full) or min(m, n) (thin); 0 without Vᵀ
  std::uint64_t a_extent = 0;
  std::uint64_t s_extent = 0;
  std::uint64_t u_extent = 0;
  std::uint64_t vt_extent = 0;
};
}  // namespace solver

template <>
struct Operation<solver::Gesvd> {
  using Checked = solver::CheckedGesvd;
  enum Slot : std::size_t { a, s, u, vt, info };

  // u and vt given exactly when their job asks for them.
  static Result<Checked> validate(const solver::Gesvd& request);
  // A destroyed in place; every output in a buffer of its own.
  static void operands(const solver::Gesvd& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const solver::Gesvd& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

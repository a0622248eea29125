// The operation contract of the symmetric eigensolver (Note [The operation contract] in operation/operation.hpp):
// solver::Syevd, checked by dense_checks, run by LAPACKE on the CPU device and by cuSOLVER on CUDA
// (eigen_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/solver/dense.hpp"
#include "libs/solver/dense_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<solver::Syevd> {
  using Checked = solver::Resolved<solver::Syevd>;
  enum Slot : std::size_t { a, w, info };

  static Result<Checked> validate(const solver::Syevd& request);
  // A in place; the values and the infos each in a buffer of their own.
  static void operands(const solver::Syevd& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const solver::Syevd& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

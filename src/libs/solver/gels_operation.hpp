// The operation contract of least squares (Note [The operation contract] in operation/operation.hpp): solver::Gels,
// checked by dense_checks, run by LAPACK's gels on the CPU device and by cuSOLVER's QR on CUDA
// (gels_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/solver/dense.hpp"
#include "libs/solver/dense_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<solver::Gels> {
  using Checked = solver::Resolved<solver::Gels>;
  enum Slot : std::size_t { a, b, info };

  // m >= n: the minimum-norm solution of m < n is not supported on any device (dense.hpp says why).
  static Result<Checked> validate(const solver::Gels& request);
  // A and B in place; the infos in a buffer of their own.
  static void operands(const solver::Gels& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const solver::Gels& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

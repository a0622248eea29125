// The operation contracts of Cholesky (Note [The operation contract] in operation/operation.hpp): solver::Potrf
// and solver::Potrs in f32, f64, c64 and c128 (symmetric or Hermitian), checked by dense_checks, run by LAPACKE on
// the CPU device and by cuSOLVER on CUDA (cholesky_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/solver/dense.hpp"
#include "libs/solver/dense_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<solver::Potrf> {
  using Checked = solver::Resolved<solver::Potrf>;
  enum Slot : std::size_t { a, info };

  static Result<Checked> validate(const solver::Potrf& request);
  // A in place; the infos in a buffer of their own.
  static void operands(const solver::Potrf& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const solver::Potrf& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<solver::Potrs> {
  using Checked = solver::Resolved<solver::Potrs>;
  enum Slot : std::size_t { a, b };

  static Result<Checked> validate(const solver::Potrs& request);
  // A read, B in place (it may not share A's buffer).
  static void operands(const solver::Potrs& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const solver::Potrs& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

// The operation contracts of LU (Note [The operation contract] in operation/operation.hpp): solver::Getrf and
// solver::Getrs in f32, f64, c64 and c128, checked by dense_checks, run by LAPACKE on the CPU device and by cuSOLVER
// on CUDA (lu_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/solver/dense.hpp"
#include "libs/solver/dense_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<solver::Getrf> {
  using Checked = solver::Resolved<solver::Getrf>;
  enum Slot : std::size_t { a, ipiv, info };

  static Result<Checked> validate(const solver::Getrf& request);
  // A in place; the pivots and infos each in a buffer of their own.
  static void operands(const solver::Getrf& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const solver::Getrf& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<solver::Getrs> {
  using Checked = solver::Resolved<solver::Getrs>;
  enum Slot : std::size_t { a, ipiv, b };

  static Result<Checked> validate(const solver::Getrs& request);
  // A and the pivots read, B in place (it may share no buffer with them).
  static void operands(const solver::Getrs& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const solver::Getrs& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

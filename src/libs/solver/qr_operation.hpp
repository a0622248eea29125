// The operation contracts of QR (Note [The operation contract] in operation/operation.hpp): solver::Geqrf,
// solver::Orgqr and solver::Ormqr, checked by dense_checks, run by LAPACKE on the CPU device and by cuSOLVER on CUDA
// (qr_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/solver/dense.hpp"
#include "libs/solver/dense_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<solver::Geqrf> {
  using Checked = solver::Resolved<solver::Geqrf>;  // b_extent: tau's
  enum Slot : std::size_t { a, tau };

  static Result<Checked> validate(const solver::Geqrf& request);
  // A in place; tau in a buffer of its own.
  static void operands(const solver::Geqrf& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const solver::Geqrf& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<solver::Orgqr> {
  using Checked = solver::Resolved<solver::Orgqr>;  // b_extent: tau's
  enum Slot : std::size_t { a, tau };

  // m >= n >= k >= 0, as LAPACK's orgqr needs.
  static Result<Checked> validate(const solver::Orgqr& request);
  // A in place; tau read (it may not share A's buffer).
  static void operands(const solver::Orgqr& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const solver::Orgqr& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<solver::Ormqr> {
  struct Checked {
    solver::Ormqr request;  // leading dimensions and strides resolved
    std::uint64_t a_extent = 0;
    std::uint64_t tau_extent = 0;
    std::uint64_t c_extent = 0;
  };
  enum Slot : std::size_t { a, tau, c };

  // k <= m (left) or k <= n (right): the reflectors are of Q's order.
  static Result<Checked> validate(const solver::Ormqr& request);
  // C in place; A written (LAPACK restores what it sets), so in a buffer of its own; tau read.
  static void operands(const solver::Ormqr& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const solver::Ormqr& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

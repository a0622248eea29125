// The operation contract of sparse::SpSV (Note [The operation contract] in operation/operation.hpp): Eigen's sparse
// triangular solve on the CPU device, cuSPARSE's SpSV (analysis, then solve) on CUDA (solve_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/sparse/sparse.hpp"
#include "libs/sparse/sparse_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<sparse::SpSV> {
  using Checked = sparse::SpSV;
  enum Slot : std::size_t { offsets, indices, values, x, y };

  static Result<Checked> validate(const sparse::SpSV& request);
  static void operands(const sparse::SpSV& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const sparse::SpSV& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

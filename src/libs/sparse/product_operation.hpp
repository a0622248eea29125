// The operation contracts of the sparse products (Note [The operation contract] in operation/operation.hpp):
// sparse::SpMV and sparse::SpMM, checked by sparse_checks, run by Eigen on the CPU device (eigen_sparse.hpp) and by
// cuSPARSE and, for SpMV of a CSR matrix, a kernel of our own on CUDA (product_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/sparse/sparse.hpp"
#include "libs/sparse/sparse_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<sparse::SpMV> {
  using Checked = sparse::SpMV;
  enum Slot : std::size_t { offsets, indices, values, x, y };

  static Result<Checked> validate(const sparse::SpMV& request);
  static void operands(const sparse::SpMV& request, const Checked& checked, Operands& operands);
  static Status check_cpu_support(const Checked& checked);
  static Status run_cpu(const sparse::SpMV& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<sparse::SpMM> {
  struct Checked {
    sparse::SpMM request;  // leading dimensions resolved
    std::uint64_t b_extent = 0;
    std::uint64_t c_extent = 0;
  };
  enum Slot : std::size_t { offsets, indices, values, b, c };

  static Result<Checked> validate(const sparse::SpMM& request);
  static void operands(const sparse::SpMM& request, const Checked& checked, Operands& operands);
  static Status check_cpu_support(const Checked& checked);
  static Status run_cpu(const sparse::SpMM& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

// The operation contracts of the sparse-sparse product (Note [The operation contract] in operation/operation.hpp):
// sparse::SpGemmCount and sparse::SpGemm (spgemm.hpp), run by Eigen on the CPU device (eigen_sparse.hpp) and by
// cuSPARSE's SpGEMM on CUDA (spgemm_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/sparse/spgemm.hpp"
#include "libs/sparse/sparse_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<sparse::SpGemmCount> {
  using Checked = sparse::SpGemmCount;
  enum Slot : std::size_t { a_offsets, a_indices, a_values, b_offsets, b_indices, b_values, c_offsets };

  static Result<Checked> validate(const sparse::SpGemmCount& request);
  static void operands(const sparse::SpGemmCount& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const sparse::SpGemmCount& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<sparse::SpGemm> {
  using Checked = sparse::SpGemm;
  enum Slot : std::size_t {
    a_offsets,
    a_indices,
    a_values,
    b_offsets,
    b_indices,
    b_values,
    c_offsets,
    c_indices,
    c_values
  };

  static Result<Checked> validate(const sparse::SpGemm& request);
  static void operands(const sparse::SpGemm& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const sparse::SpGemm& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

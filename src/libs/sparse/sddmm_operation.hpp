// The operation contract of sparse::SDDMM (Note [The operation contract] in operation/operation.hpp): checked by
// sparse_checks, run by Eigen on the CPU device (eigen_sparse.hpp) and by cuSPARSE on CUDA (sddmm_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/sparse/sddmm.hpp"
#include "libs/sparse/sparse_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<sparse::SDDMM> {
  struct Checked {
    sparse::SDDMM request;  // leading dimensions resolved
    std::uint64_t a_extent = 0;
    std::uint64_t b_extent = 0;
  };
  // C's arrays first: the analysis of its structure reads them there (cusparse_run.hpp).
  enum Slot : std::size_t { offsets, indices, values, a, b };

  static Result<Checked> validate(const sparse::SDDMM& request);
  static void operands(const sparse::SDDMM& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const sparse::SDDMM& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

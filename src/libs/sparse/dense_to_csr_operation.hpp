// The operation contracts of the dense-to-CSR conversion (Note [The operation contract] in operation/operation.hpp):
// sparse::DenseToCsrCount and sparse::DenseToCsr (dense_to_csr.hpp), a scan of the host array on the CPU device
// and cusparseDenseToSparse on CUDA (dense_to_csr_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/sparse/dense_to_csr.hpp"
#include "libs/sparse/sparse_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<sparse::DenseToCsrCount> {
  struct Checked {
    sparse::DenseToCsrCount request;  // a's leading dimension resolved
    std::uint64_t a_extent = 0;
  };
  enum Slot : std::size_t { a, offsets };

  static Result<Checked> validate(const sparse::DenseToCsrCount& request);
  static void operands(const sparse::DenseToCsrCount& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const sparse::DenseToCsrCount& request, const Checked& checked,
                        std::span<const BufferView> views, const CpuTarget& target);
};

template <>
struct Operation<sparse::DenseToCsr> {
  struct Checked {
    sparse::DenseToCsr request;  // a's leading dimension resolved
    std::uint64_t a_extent = 0;
  };
  enum Slot : std::size_t { a, offsets, indices, values };

  static Result<Checked> validate(const sparse::DenseToCsr& request);
  static void operands(const sparse::DenseToCsr& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const sparse::DenseToCsr& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
};

}  // namespace accel

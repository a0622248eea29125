// The operation contracts of the sparse conversions (Note [The operation contract] in operation/operation.hpp):
// sparse::ToDense (Eigen / cusparseSparseToDense), sparse::CsrToCoo and sparse::CooToCsr (a scan on the host, kernels
// of our own on CUDA; i32 and i64 indices on both). On CUDA: convert_operation_cuda.hpp.
#pragma once

#include <span>

#include "accel/libs/sparse/sparse.hpp"
#include "libs/sparse/sparse_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<sparse::ToDense> {
  struct Checked {
    sparse::ToDense request;  // out's leading dimension resolved
    std::uint64_t out_extent = 0;
  };
  enum Slot : std::size_t { offsets, indices, values, out };

  static Result<Checked> validate(const sparse::ToDense& request);
  static void operands(const sparse::ToDense& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const sparse::ToDense& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<sparse::CsrToCoo> {
  using Checked = sparse::CsrToCoo;
  enum Slot : std::size_t { offsets, indices, values, rows };

  static Result<Checked> validate(const sparse::CsrToCoo& request);
  static void operands(const sparse::CsrToCoo& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const sparse::CsrToCoo& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
};

template <>
struct Operation<sparse::CooToCsr> {
  using Checked = sparse::CooToCsr;
  enum Slot : std::size_t { rows, indices, values, offsets };

  static Result<Checked> validate(const sparse::CooToCsr& request);
  static void operands(const sparse::CooToCsr& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const sparse::CooToCsr& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
};

}  // namespace accel

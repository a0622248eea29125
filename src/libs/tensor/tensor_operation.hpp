// The operation contracts of the tensor family (Note [The operation contract] in operation/operation.hpp):
// tensor::Contract, ElementwiseBinary, ElementwiseTrinary, Reduce and Permute, checked by tensor_checks, run by
// OpenBLAS and Eigen on the CPU device (cpu_tensor.hpp) and by cuTENSOR on CUDA (tensor_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/tensor/tensor.hpp"
#include "libs/tensor/tensor_checks.hpp"
#include "operation/operation.hpp"

namespace accel {

template <>
struct Operation<tensor::Contract> {
  using Checked = tensor::Counts;
  enum Slot : std::size_t { a, b, c, d };

  static Result<Checked> validate(const tensor::Contract& request);
  // A and B read, C read when given, D written and alone in its buffer.
  static void operands(const tensor::Contract& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const tensor::Contract& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<tensor::ElementwiseBinary> {
  using Checked = tensor::Counts;
  enum Slot : std::size_t { a, c, d };

  static Result<Checked> validate(const tensor::ElementwiseBinary& request);
  static void operands(const tensor::ElementwiseBinary& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const tensor::ElementwiseBinary& request, const Checked& checked,
                        std::span<const BufferView> views, const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<tensor::ElementwiseTrinary> {
  using Checked = tensor::Counts;
  enum Slot : std::size_t { a, b, c, d };

  static Result<Checked> validate(const tensor::ElementwiseTrinary& request);
  static void operands(const tensor::ElementwiseTrinary& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const tensor::ElementwiseTrinary& request, const Checked& checked,
                        std::span<const BufferView> views, const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<tensor::Reduce> {
  using Checked = tensor::Counts;
  enum Slot : std::size_t { a, c, d };

  static Result<Checked> validate(const tensor::Reduce& request);
  static void operands(const tensor::Reduce& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const tensor::Reduce& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<tensor::Permute> {
  using Checked = tensor::Counts;
  enum Slot : std::size_t { a, b };

  static Result<Checked> validate(const tensor::Permute& request);
  static void operands(const tensor::Permute& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const tensor::Permute& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

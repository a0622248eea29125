// The operation contracts of blas::Trsm, Syrk, Symm, Trmm and Geam (Note [The operation contract] in
// operation/operation.hpp), checked by blas_checks, run by OpenBLAS on the CPU device and by cuBLAS on CUDA
// (level3_operation_cuda.hpp), a call per matrix of a batch on both.
#pragma once

#include <span>

#include "accel/libs/blas/level3.hpp"
#include "operation/operation.hpp"

namespace accel {

namespace blas {
// A Trsm or Syrk with its leading dimensions and strides resolved, and the spans of its matrices: A's, and the
// written one's (Trsm's B, Syrk's C).
template <class Request>
struct MatricesChecked {
  Request request;
  std::uint64_t a_extent = 0;
  std::uint64_t written_extent = 0;
};

// A Symm or Geam with its leading dimensions and strides resolved, and the spans of A, B and C.
template <class Request>
struct ThreeMatricesChecked {
  Request request;
  std::uint64_t a_extent = 0;
  std::uint64_t b_extent = 0;
  std::uint64_t c_extent = 0;
};
}  // namespace blas

template <>
struct Operation<blas::Trsm> {
  using Checked = blas::MatricesChecked<blas::Trsm>;
  enum Slot : std::size_t { a, b };
  static Result<Checked> validate(const blas::Trsm& request);
  // A read; B in place, in a buffer of its own.
  static void operands(const blas::Trsm& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Trsm& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Syrk> {
  using Checked = blas::MatricesChecked<blas::Syrk>;
  enum Slot : std::size_t { a, c };
  static Result<Checked> validate(const blas::Syrk& request);
  // A read; C written, in a buffer of its own.
  static void operands(const blas::Syrk& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Syrk& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Symm> {
  using Checked = blas::ThreeMatricesChecked<blas::Symm>;
  enum Slot : std::size_t { a, b, c };
  static Result<Checked> validate(const blas::Symm& request);
  // A and B read; C written, in a buffer of its own.
  static void operands(const blas::Symm& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Symm& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Trmm> {
  using Checked = blas::MatricesChecked<blas::Trmm>;
  enum Slot : std::size_t { a, b };
  static Result<Checked> validate(const blas::Trmm& request);
  // A read; B in place, in a buffer of its own.
  static void operands(const blas::Trmm& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Trmm& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Geam> {
  using Checked = blas::ThreeMatricesChecked<blas::Geam>;
  enum Slot : std::size_t { a, b, c };
  static Result<Checked> validate(const blas::Geam& request);
  // A and B read; C written, in a buffer of its own.
  static void operands(const blas::Geam& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Geam& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

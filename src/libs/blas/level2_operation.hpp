// The operation contracts of blas::Gemv, Ger, Trsv and Symv (Note [The operation contract] in
// operation/operation.hpp), checked by blas_checks, run by OpenBLAS on the CPU device (a call per matrix of a batch)
// and by cuBLAS on CUDA (level2_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/blas/level2.hpp"
#include "operation/operation.hpp"

namespace accel {

namespace blas {
// A Gemv with its leading dimension and strides resolved, and the lengths and spans of its operands.
struct GemvChecked {
  Gemv request;
  std::int64_t x_length = 0;  // op(A)'s columns
  std::int64_t y_length = 0;  // op(A)'s rows
  std::uint64_t a_extent = 0;
  std::uint64_t x_extent = 0;
  std::uint64_t y_extent = 0;
};

// A Ger, Trsv or Symv with its leading dimension and strides resolved, and the spans of its operands (y_extent 0
// for Trsv).
template <class Request>
struct Level2Checked {
  Request request;
  std::uint64_t a_extent = 0;
  std::uint64_t x_extent = 0;
  std::uint64_t y_extent = 0;
};
}  // namespace blas

template <>
struct Operation<blas::Gemv> {
  using Checked = blas::GemvChecked;
  enum Slot : std::size_t { a, x, y };
  static Result<Checked> validate(const blas::Gemv& request);
  // A and x read; y written, in a buffer of its own.
  static void operands(const blas::Gemv& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Gemv& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Ger> {
  using Checked = blas::Level2Checked<blas::Ger>;
  enum Slot : std::size_t { a, x, y };
  static Result<Checked> validate(const blas::Ger& request);
  static void operands(const blas::Ger& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Ger& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Trsv> {
  using Checked = blas::Level2Checked<blas::Trsv>;
  enum Slot : std::size_t { a, x };
  static Result<Checked> validate(const blas::Trsv& request);
  static void operands(const blas::Trsv& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Trsv& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Symv> {
  using Checked = blas::Level2Checked<blas::Symv>;
  enum Slot : std::size_t { a, x, y };
  static Result<Checked> validate(const blas::Symv& request);
  static void operands(const blas::Symv& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Symv& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

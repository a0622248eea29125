// The operation contracts of BLAS level 1 (Note [The operation contract] in operation/operation.hpp): blas::Axpy,
// Scal, Dot, Nrm2, Asum, Iamax, Copy, Swap, Rot and Iamin on f32, f64, c64 and c128, checked by blas_checks, run by
// OpenBLAS on the CPU device and by cuBLAS on CUDA (level1_operation_cuda.hpp). The scalar results go into a buffer of
// their own, written in stream order, never through the host.
#pragma once

#include <span>

#include "accel/libs/blas/level1.hpp"
#include "operation/operation.hpp"

namespace accel {

namespace blas {
// A level-1 request with the spans of its vectors (y_extent 0 for a request without y).
template <class Request>
struct VectorChecked {
  Request request;
  std::uint64_t x_extent = 0;
  std::uint64_t y_extent = 0;
};
}  // namespace blas

template <>
struct Operation<blas::Axpy> {
  using Checked = blas::VectorChecked<blas::Axpy>;
  enum Slot : std::size_t { x, y };
  static Result<Checked> validate(const blas::Axpy& request);
  // x read; y written, in a buffer of its own.
  static void operands(const blas::Axpy& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Axpy& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Scal> {
  using Checked = blas::VectorChecked<blas::Scal>;
  enum Slot : std::size_t { x };
  static Result<Checked> validate(const blas::Scal& request);
  static void operands(const blas::Scal& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Scal& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Dot> {
  using Checked = blas::VectorChecked<blas::Dot>;
  enum Slot : std::size_t { x, y, result };
  static Result<Checked> validate(const blas::Dot& request);
  static void operands(const blas::Dot& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Dot& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Nrm2> {
  using Checked = blas::VectorChecked<blas::Nrm2>;
  enum Slot : std::size_t { x, result };
  static Result<Checked> validate(const blas::Nrm2& request);
  static void operands(const blas::Nrm2& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Nrm2& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Asum> {
  using Checked = blas::VectorChecked<blas::Asum>;
  enum Slot : std::size_t { x, result };
  static Result<Checked> validate(const blas::Asum& request);
  static void operands(const blas::Asum& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Asum& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Iamax> {
  using Checked = blas::VectorChecked<blas::Iamax>;
  enum Slot : std::size_t { x, result };
  static Result<Checked> validate(const blas::Iamax& request);
  static void operands(const blas::Iamax& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Iamax& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Copy> {
  using Checked = blas::VectorChecked<blas::Copy>;
  enum Slot : std::size_t { x, y };
  static Result<Checked> validate(const blas::Copy& request);
  static void operands(const blas::Copy& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Copy& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Swap> {
  using Checked = blas::VectorChecked<blas::Swap>;
  enum Slot : std::size_t { x, y };
  static Result<Checked> validate(const blas::Swap& request);
  static void operands(const blas::Swap& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Swap& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Rot> {
  using Checked = blas::VectorChecked<blas::Rot>;
  enum Slot : std::size_t { x, y };
  static Result<Checked> validate(const blas::Rot& request);
  static void operands(const blas::Rot& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Rot& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

template <>
struct Operation<blas::Iamin> {
  using Checked = blas::VectorChecked<blas::Iamin>;
  enum Slot : std::size_t { x, result };
  static Result<Checked> validate(const blas::Iamin& request);
  static void operands(const blas::Iamin& request, const Checked& checked, Operands& operands);
  static Status run_cpu(const blas::Iamin& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);
};

}  // namespace accel

// The operation contract of Gemm (Note [The operation contract] in operation/operation.hpp): checked by
// plan_gemm_geometry, operands a, b, c and the optional bias, run by OpenBLAS on the CPU device and by cuBLASLt
// on CUDA (gemm_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/blas/gemm.hpp"
#include "operation/operation.hpp"

namespace accel {

namespace blas {
// The operand addresses of a resolved GEMM.
struct GemmOperands {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* bias = nullptr;  // null unless the epilogue has a bias
  // C where it is not the output: c = alpha A B + beta addend (a residual added in the product's epilogue, read,
  // never written). Only cuBLASLt's runs for the compiled graphs set it; a request's C is c, read, then written.
  const void* addend = nullptr;
};
}  // namespace blas

template <>
struct Operation<Gemm> {
  using Checked = GemmGeometry;
  // Indices of the operands in the list operands() makes.
  enum Slot : std::size_t { a, b, c, bias };

  // Sizes, leading dimensions, strides and the bias's presence; C, written, shares no buffer with the others.
  static Result<GemmGeometry> validate(const Gemm& request);
  static void operands(const Gemm& request, const GemmGeometry& geometry, Operands& operands);
  // What OpenBLAS can do (f32 and f64), before any buffer is resolved.
  static Status check_cpu_support(const GemmGeometry& geometry);
  static Status run_cpu(const Gemm& request, const GemmGeometry& geometry, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);

  [[nodiscard]] static blas::GemmOperands addresses(std::span<const BufferView> views) noexcept {
    return {.a = views[a].data, .b = views[b].data, .c = views[c].data, .bias = views[bias].data};
  }
  // Whether there is nothing to compute: an empty C (k = 0 still scales C by beta).
  [[nodiscard]] static bool is_empty(const GemmGeometry& geometry) noexcept {
    return geometry.shape.m == 0 || geometry.shape.n == 0 || geometry.shape.batch == 0;
  }
};

}  // namespace accel

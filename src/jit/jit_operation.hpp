// The operation contract of the JIT family (Note [The operation contract] in operation/operation.hpp): NVRTC
// programs (LaunchKernel, CUDA only) and CUTLASS GEMM, grouped GEMM and convolution (a double-precision
// reference on the CPU device). CUDA: jit/cuda/jit_operation_cuda.hpp.
#pragma once

#include <span>
#include <vector>

#include "accel/core/byte_codec.hpp"
#include "accel/dnn/graph.hpp"
#include "accel/jit/cutlass.hpp"
#include "accel/jit/kernel.hpp"
#include "jit/cutlass_operands.hpp"
#include "jit/cutlass_requests.hpp"
#include "operation/operation.hpp"

namespace accel {

// A CUDA C++ kernel: no CPU implementation (the CPU device answers not_supported).
template <>
struct Operation<LaunchKernel> {
  struct Checked {};
  // A program, a positive grid and block, at most 1024 threads a block, known argument kinds.
  static Result<Checked> validate(const LaunchKernel& request);
  // One operand per buffer argument ("argument i"), from its offset on.
  static void operands(const LaunchKernel& request, const Checked&, Operands& operands);
  static void encode(ByteWriter& out, const LaunchKernel& request);
  static Result<LaunchKernel> decode(ByteReader& in);
};

template <>
struct Operation<CutlassGemm> {
  using Checked = jit::CutlassGemmGeometry;
  static Result<Checked> validate(const CutlassGemm& request) { return jit::check_cutlass_gemm(request); }
  static void operands(const CutlassGemm& request, const Checked& checked, Operands& operands) {
    jit::cutlass_gemm_operands(request, checked, operands);
  }
  static Status run_cpu(const CutlassGemm& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
};

template <>
struct Operation<CutlassGroupedGemm> {
  using Checked = std::vector<jit::CutlassGemmGeometry>;
  static Result<Checked> validate(const CutlassGroupedGemm& request) {
    return jit::check_cutlass_grouped_gemm(request);
  }
  static void operands(const CutlassGroupedGemm& request, const Checked& checked, Operands& operands) {
    jit::cutlass_grouped_gemm_operands(request, checked, operands);
  }
  static Status run_cpu(const CutlassGroupedGemm& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void encode(ByteWriter& out, const CutlassGroupedGemm& request);
  static Result<CutlassGroupedGemm> decode(ByteReader& in);
};

template <>
struct Operation<CutlassConv> {
  using Checked = jit::ConvExtents;
  enum Slot : std::size_t { x, w, y };
  static Result<Checked> validate(const CutlassConv& request);
  static void operands(const CutlassConv& request, const Checked& checked, Operands& operands) {
    jit::cutlass_conv_operands(request, checked, operands);
  }
  // The convolution of the same pass (the cuDNN family's reference), then out = alpha * result + beta * before.
  static Status run_cpu(const CutlassConv& request, const Checked& checked, std::span<const BufferView> views,
                        const CpuTarget& target);
};

namespace jit {
// The views of a library convolution's bindings (in their checked order), taken from a CutlassConv's x, w, y.
[[nodiscard]] std::vector<BufferView> library_conv_views(const CutlassConv& request,
                                                         std::span<const dnn::TensorBinding> bindings,
                                                         std::span<const BufferView> views);
}  // namespace jit

}  // namespace accel

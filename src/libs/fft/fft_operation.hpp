// The operation contract of Fft (Note [The operation contract] in operation/operation.hpp): checked by
// plan_fft_geometry, operands input and output (one buffer in place), run by FFTW on the CPU device and by cuFFT
// on CUDA (fft_operation_cuda.hpp).
#pragma once

#include <span>

#include "accel/libs/fft/fft.hpp"
#include "operation/operation.hpp"

namespace accel {

namespace fft {
// The operand addresses of a resolved FFT (the same address twice in place).
struct FftOperands {
  void* input = nullptr;
  void* output = nullptr;
};
}  // namespace fft

template <>
struct Operation<Fft> {
  using Checked = FftGeometry;
  // Indices of the operands in the list operands() makes; in place, `output` is absent and `input` is both.
  enum Slot : std::size_t { input, output };

  // The geometry for the placement the handles say (the same buffer twice: in place).
  static Result<FftGeometry> validate(const Fft& request);
  // Out of place: input (written too for c2r, which destroys it) and output, written and alone in its buffer.
  // In place: the one buffer, of the real or the complex element type, covering both layouts.
  static void operands(const Fft& request, const FftGeometry& geometry, Operands& operands);
  static Status run_cpu(const Fft& request, const FftGeometry& geometry, std::span<const BufferView> views,
                        const CpuTarget& target);
  static void describe_cpu(LibraryReport& report);

  [[nodiscard]] static fft::FftOperands addresses(const FftGeometry& geometry,
                                                  std::span<const BufferView> views) noexcept {
    void* in = views[input].data;
    return {.input = in, .output = geometry.in_place ? in : views[output].data};
  }
};

}  // namespace accel

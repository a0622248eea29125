#include "libs/fft/fft_operation.hpp"

#include <algorithm>

#include "libs/fft/cpu_fft.hpp"

namespace accel {

Result<FftGeometry> Operation<Fft>::validate(const Fft& request) {
  return plan_fft_geometry(request.shape, same_buffer(request.input, request.output));
}

void Operation<Fft>::operands(const Fft& request, const FftGeometry& g, Operands& operands) {
  if (!g.in_place) {
    // c2r uses its input as scratch (FFTW and cuFFT alike), so it is written as far as ordering goes.
    const Access input_access = g.shape.type == FftType::c2r ? Access::write : Access::read;
    operands.typed(request.input, "input", input_access, g.input_type, g.input_extent)
        .add({.buffer = request.output,
              .name = "output",
              .access = Access::write,
              .count = g.output_extent,
              .check_dtype = true,
              .dtype = g.output_type,
              .exclusive = true});
    return;
  }
  // One buffer under both layouts: it must reach as far as the farther one, counted in its own elements. It may
  // hold the real type (r2c/c2r) or the complex one; any other fails the dtype check against the complex type.
  const std::uint64_t bytes =
      std::max(g.input_extent * size_of(g.input_type), g.output_extent * size_of(g.output_type));
  const DType held = g.shape.type != FftType::c2c && request.input.dtype == g.real_type ? g.real_type : g.complex_type;
  operands
      .typed(request.input, "input/output (in place)", Access::write, held, (bytes + size_of(held) - 1) / size_of(held))
      .absent("output");
}

Status Operation<Fft>::run_cpu(const Fft&, const FftGeometry& geometry, std::span<const BufferView> views,
                               const CpuTarget&) {
  return fft::run_cpu_fft(geometry, addresses(geometry, views));
}

void Operation<Fft>::describe_cpu(LibraryReport& report) {
  report.report(fft::fftw_library());
  report.report(fft::fftw_plan_stats());
}

}  // namespace accel

#include "libs/fft/fft_operation_cuda.hpp"

#include <fmt/format.h>

#include "libs/fft/fft_scale.hpp"

namespace accel {

Result<CudaOperation<Fft>::Plan> CudaOperation<Fft>::plan(const Fft& request, const FftGeometry& geometry,
                                                          CudaTarget& target) {
  // The generic path plans before it resolves the operands (validate -> plan -> operands -> run, cuda_stream.hpp),
  // so that plans are made outside the buffers' lock; a cuFFT plan costs milliseconds and device memory. So the
  // operands are checked against their handles before any plan is made; only what needs the buffer table (a freed
  // buffer, one of another device) waits for resolution.
  Operands operands;
  Operation<Fft>::operands(request, geometry, operands);
  ACCEL_RETURN_IF_ERROR(check_against_handles(operands));
  if (geometry.real_type == DType::f16 && target.compute_capability() < 53) {
    return not_supported(
        fmt::format("f16 FFTs need compute capability 5.3 or later (cuFFT's half precision); {} is {}.{}",
                    target.gpu_name(), target.compute_capability() / 10, target.compute_capability() % 10));
  }
  ACCEL_ASSIGN_OR_RETURN(fft::CufftPlans * plans, target.stream_state<fft::CufftPlans>());
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<const fft::CufftPlan> plan, plans->plan(geometry));
  return Plan{.plan = std::move(plan)};
}

Status CudaOperation<Fft>::run(const Fft&, const FftGeometry& g, const Plan& plan, std::span<const BufferView> views,
                               CudaRun& run) {
  const fft::FftOperands operands = Operation<Fft>::addresses(g, views);
  ACCEL_RETURN_IF_ERROR(launch_status(run.target, plan.plan->execute(g, operands, run.workspace), "cuFFT"));
  const double factor = g.scale();
  if (factor == 1.0) return Status();
  fft::ScaledLayout layout{.batch = g.shape.batch, .distance = g.shape.output.distance};
  for (int d = 0; d < 3; ++d) {
    layout.sizes[d] = g.output_sizes[d];
    layout.strides[d] = g.output_strides[d];
  }
  const fft::ScaledPart part = g.real_type == DType::f64   ? fft::ScaledPart::f64
                               : g.real_type == DType::f16 ? fft::ScaledPart::f16
                                                           : fft::ScaledPart::f32;
  return run.target.check(
      fft::scale_layout(operands.output, part, g.output_type == g.complex_type, layout, factor, run.target.stream()),
      "the FFT's normalisation kernel");
}

void CudaOperation<Fft>::describe(CudaTarget& target, LibraryReport& report) {
  report.report(fft::cufft_library());
  if (fft::CufftPlans* plans = target.existing_stream_state<fft::CufftPlans>()) {
    report.report(plans->stats());
    report.report(plans->graph_stats());
  }
}

}  // namespace accel

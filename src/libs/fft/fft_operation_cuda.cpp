#include "libs/fft/fft_operation_cuda.hpp"

#include <fmt/format.h>

#include "libs/fft/fft_scale.hpp"

namespace accel {
namespace {

// The generic path plans before it resolves the operands (validate -> plan -> operands -> run, cuda_stream.hpp), so
// that plans are made outside the buffers' lock; a cuFFT plan costs milliseconds and device memory. A handle carries
// the dtype and count that resolution requires the buffer table to confirm, so the operands are checked against the
// handles here, with resolution's words, before any plan is made; only what needs the table (a freed buffer, one of
// another device) waits for resolution.
Status check_operands_as_claimed(const Operands& operands) {
  for (const Operand& o : operands.list()) {
    if (o.optional && o.buffer.is_null()) continue;
    if (o.buffer.is_null()) return invalid_argument(fmt::format("operand '{}' is a null buffer handle", o.name));
    std::uint64_t end = 0;
    if (__builtin_add_overflow(o.first, o.count, &end) || end > o.buffer.count) {
      return invalid_argument(fmt::format("operand '{}': elements [{}, {} + {}) lie outside {} ({} elements)", o.name,
                                          o.first, o.first, o.count, to_string(o.buffer), o.buffer.count));
    }
    if (o.check_dtype && o.buffer.dtype != o.dtype) {
      return invalid_argument(fmt::format("operand '{}' holds {} but the request needs {}", o.name,
                                          to_string(o.buffer.dtype), to_string(o.dtype)));
    }
  }
  return Status();
}

}  // namespace

Result<CudaOperation<Fft>::Plan> CudaOperation<Fft>::plan(const Fft& request, const FftGeometry& geometry,
                                                          CudaTarget& target) {
  Operands operands;
  Operation<Fft>::operands(request, geometry, operands);
  ACCEL_RETURN_IF_ERROR(check_operands_as_claimed(operands));
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
  return run.target.check(fft::scale_layout(operands.output, g.real_type == DType::f64, g.output_type == g.complex_type,
                                            layout, factor, run.target.stream()),
                          "the FFT's normalisation kernel");
}

void CudaOperation<Fft>::describe(CudaTarget& target, LibraryReport& report) {
  report.report(fft::cufft_library());
  if (fft::CufftPlans* plans = target.existing_stream_state<fft::CufftPlans>()) report.report(plans->stats());
}

}  // namespace accel

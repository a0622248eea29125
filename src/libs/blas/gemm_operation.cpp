#include "libs/blas/gemm_operation.hpp"

#include <fmt/format.h>

#include "libs/blas/cpu_gemm.hpp"

namespace accel {

Result<GemmGeometry> Operation<Gemm>::validate(const Gemm& request) {
  ACCEL_ASSIGN_OR_RETURN(GemmGeometry geometry, plan_gemm_geometry(request.shape));
  if (!geometry.shape.epilogue.has_bias() && !request.bias.is_null()) {
    return invalid_argument(
        fmt::format("a bias buffer was given but the epilogue is '{}'", to_string(geometry.shape.epilogue)));
  }
  return geometry;
}

void Operation<Gemm>::operands(const Gemm& request, const GemmGeometry& geometry, Operands& operands) {
  const GemmShape& s = geometry.shape;
  operands.typed(request.a, "a", Access::read, s.input_type, geometry.a_extent)
      .typed(request.b, "b", Access::read, s.input_type, geometry.b_extent)
      .add({.buffer = request.c,
            .name = "c",
            .access = Access::write,
            .count = geometry.c_extent,
            .check_dtype = true,
            .dtype = s.output_type,
            .exclusive = true});
  if (s.epilogue.has_bias()) {
    operands.typed(request.bias, "bias", Access::read, s.output_type, geometry.bias_extent);
  } else {
    operands.absent("bias");
  }
}

Status Operation<Gemm>::run_cpu(const Gemm& request, const GemmGeometry& geometry, std::span<const BufferView> views,
                                const CpuTarget&) {
  if (is_empty(geometry)) return Status();
  blas::run_cpu_gemm(geometry, addresses(views), request.alpha, request.beta);
  return Status();
}

Status Operation<Gemm>::check_cpu_support(const GemmGeometry& geometry) {
  return blas::check_cpu_gemm_support(geometry);
}

void Operation<Gemm>::describe_cpu(LibraryReport& report) { report.report(blas::cpu_blas_library()); }

}  // namespace accel

#include "libs/blas/gemm_operands.hpp"

#include <fmt/format.h>

namespace accel::blas {
namespace {

Result<void*> operand(const device::BufferTable& table, const BufferHandle& handle, std::string_view name,
                      DType expected, std::uint64_t extent) {
  ACCEL_ASSIGN_OR_RETURN(device::BufferView view, table.resolve_range(handle, name, 0, extent));
  if (view.dtype != expected) {
    return invalid_argument(fmt::format("operand '{}' holds {} but the GEMM shape says {}", name, to_string(view.dtype),
                                        to_string(expected)));
  }
  return view.data;
}

}  // namespace

Result<GemmOperands> resolve_gemm_operands(const Gemm& gemm, const GemmGeometry& geometry,
                                           const device::BufferTable& table) {
  const GemmShape& s = geometry.shape;
  GemmOperands ops;
  ACCEL_ASSIGN_OR_RETURN(ops.a, operand(table, gemm.a, "a", s.input_type, geometry.a_extent));
  ACCEL_ASSIGN_OR_RETURN(ops.b, operand(table, gemm.b, "b", s.input_type, geometry.b_extent));
  ACCEL_ASSIGN_OR_RETURN(ops.c, operand(table, gemm.c, "c", s.output_type, geometry.c_extent));
  if (has_bias(s.epilogue)) {
    ACCEL_ASSIGN_OR_RETURN(ops.bias, operand(table, gemm.bias, "bias", s.output_type, geometry.bias_extent));
  } else if (!gemm.bias.is_null()) {
    return invalid_argument(fmt::format("a bias buffer was given but the epilogue is '{}'", to_string(s.epilogue)));
  }
  if (gemm.c.slot == gemm.a.slot || gemm.c.slot == gemm.b.slot) {
    return invalid_argument("operand 'c' is the same buffer as an input; GEMM output must not alias A or B");
  }
  return ops;
}

}  // namespace accel::blas

#include <fmt/format.h>

#include "operation/operation.hpp"

namespace accel {

Status check_not_null(std::string_view operand, const BufferHandle& buffer) {
  if (!buffer.is_null()) return Status();
  return invalid_argument(fmt::format("operand '{}' is a null buffer handle", operand));
}

Status check_operand_range(std::string_view operand, const BufferHandle& buffer, std::uint64_t first,
                           std::uint64_t count) {
  std::uint64_t end = 0;
  if (!__builtin_add_overflow(first, count, &end) && end <= buffer.count) return Status();
  return invalid_argument(fmt::format("operand '{}': elements [{}, {} + {}) lie outside {} ({} elements)", operand,
                                      first, first, count, to_string(buffer), buffer.count));
}

Status check_against_handle(const Operand& operand) {
  if (operand.optional && operand.buffer.is_null()) return Status();
  ACCEL_RETURN_IF_ERROR(check_not_null(operand.name, operand.buffer));
  ACCEL_RETURN_IF_ERROR(check_operand_range(operand.name, operand.buffer, operand.first, operand.count));
  if (operand.check_dtype && operand.buffer.dtype != operand.dtype) {
    return invalid_argument(fmt::format("operand '{}' holds {} but the request needs {}", operand.name,
                                        to_string(operand.buffer.dtype), to_string(operand.dtype)));
  }
  return Status();
}

Status check_against_handles(const Operands& operands) {
  for (const Operand& operand : operands.list()) ACCEL_RETURN_IF_ERROR(check_against_handle(operand));
  return Status();
}

}  // namespace accel

#include "libs/solver/dense_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace accel::solver {

Status check_dtype(std::string_view request, DType dtype) {
  if (dtype == DType::f32 || dtype == DType::f64 || dtype == DType::c64 || dtype == DType::c128) return Status();
  return not_supported(
      fmt::format("{}: dtype {} is not supported; it takes f32, f64, c64 or c128", request, to_string(dtype)));
}

Status check_fill(std::string_view request, Fill fill) {
  if (fill == Fill::lower || fill == Fill::upper) return Status();
  return invalid_argument(fmt::format("{}: fill = {} is neither lower nor upper", request, static_cast<int>(fill)));
}

Status check_side(std::string_view request, Side side) {
  if (side == Side::left || side == Side::right) return Status();
  return invalid_argument(fmt::format("{}: side = {} is neither left nor right", request, static_cast<int>(side)));
}

Status check_transpose(std::string_view request, Transpose transpose) {
  if (transpose == Transpose::none || transpose == Transpose::transpose) return Status();
  return invalid_argument(
      fmt::format("{}: transpose = {} is neither none nor transpose", request, static_cast<int>(transpose)));
}

Status check_size(std::string_view request, std::string_view name, std::int64_t value) {
  if (value < 0) return invalid_argument(fmt::format("{}: {} = {} is negative", request, name, value));
  if (value > kMaxLapackInt) {
    return not_supported(
        fmt::format("{}: {} = {} exceeds the 32-bit integers of LAPACK and cuSOLVER", request, name, value));
  }
  return Status();
}

Status check_batch(std::string_view request, std::int64_t batch) {
  if (batch < 1) return invalid_argument(fmt::format("{}: batch = {} must be at least 1", request, batch));
  return Status();
}

Result<std::uint64_t> check_matrices(std::string_view request, std::string_view name, std::int64_t rows,
                                     std::int64_t cols, std::int64_t batch, std::int64_t& ld, std::int64_t& stride,
                                     bool written) {
  const std::int64_t min_ld = std::max<std::int64_t>(1, rows);
  if (ld == 0) ld = min_ld;
  if (ld < min_ld) {
    return invalid_argument(
        fmt::format("{}: ld{} = {} is less than max(1, {}), the rows of {}", request, name, ld, rows, name));
  }
  ACCEL_RETURN_IF_ERROR(check_size(request, fmt::format("ld{}", name), ld));
  if (stride < 0) return invalid_argument(fmt::format("{}: stride_{} = {} is negative", request, name, stride));
  // ld and cols fit 32 bits, so their products fit 64.
  const std::int64_t one = rows == 0 || cols == 0 ? 0 : ld * (cols - 1) + rows;
  if (stride == 0) stride = ld * cols;
  if (written && batch > 1 && stride < one) {
    return invalid_argument(
        fmt::format("{}: stride_{} = {} makes the {} matrices of {} overlap (each spans {} elements)", request, name,
                    stride, batch, name, one));
  }
  if (one == 0) return std::uint64_t{0};
  std::int64_t extent = 0;
  if (__builtin_mul_overflow(batch - 1, stride, &extent) || __builtin_add_overflow(extent, one, &extent)) {
    return invalid_argument(
        fmt::format("{}: {} is too large: {} matrices {} elements apart overflow", request, name, batch, stride));
  }
  return static_cast<std::uint64_t>(extent);
}

Result<std::uint64_t> vector_extent(std::string_view request, std::string_view name, std::int64_t per,
                                    std::int64_t batch) {
  std::int64_t extent = 0;
  if (__builtin_mul_overflow(per, batch, &extent)) {
    return invalid_argument(fmt::format("{}: {} is too large: {} x {} elements overflow", request, name, per, batch));
  }
  return static_cast<std::uint64_t>(extent);
}

void read_matrix(Operands& operands, BufferHandle buffer, std::string_view name, DType dtype, std::uint64_t count) {
  operands.typed(buffer, std::string(name), Access::read, dtype, count);
}

void write_matrix(Operands& operands, BufferHandle buffer, std::string_view name, DType dtype, std::uint64_t count) {
  operands.add({.buffer = buffer,
                .name = std::string(name),
                .access = Access::write,
                .count = count,
                .check_dtype = true,
                .dtype = dtype,
                .exclusive = true});
}

void write_optional(Operands& operands, BufferHandle buffer, std::string_view name, DType dtype, std::uint64_t count) {
  if (buffer.is_null()) {
    operands.absent(std::string(name));
    return;
  }
  write_matrix(operands, buffer, name, dtype, count);
}

std::string_view to_string(Fill fill) noexcept { return fill == Fill::upper ? "upper" : "lower"; }
std::string_view to_string(Side side) noexcept { return side == Side::right ? "right" : "left"; }
std::string_view to_string(SvdJob job) noexcept {
  return job == SvdJob::full ? "full" : job == SvdJob::thin ? "thin" : "none";
}
std::string_view to_string(EigenJob job) noexcept {
  return job == EigenJob::values_and_vectors ? "values_and_vectors" : "values";
}

}  // namespace accel::solver

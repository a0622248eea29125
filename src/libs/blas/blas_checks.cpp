#include "libs/blas/blas_checks.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace accel::blas {
namespace {

// `what` and `name` together name the batch in errors ("the batch of " "x"); formatted only on failure, since
// every request passes here.
Result<std::uint64_t> batch_span(std::string_view request, std::string_view what, std::string_view name,
                                 std::uint64_t one, std::int64_t batch, std::int64_t stride) {
  if (one == 0) return std::uint64_t{0};
  std::int64_t extent = 0;
  if (__builtin_mul_overflow(batch - 1, stride, &extent) ||
      __builtin_add_overflow(extent, static_cast<std::int64_t>(one), &extent)) {
    return invalid_argument(fmt::format("{}: {}{} is too large: {} of them {} elements apart overflow", request, what,
                                        name, batch, stride));
  }
  return static_cast<std::uint64_t>(extent);
}

Status check_size(std::string_view request, std::string_view prefix, std::string_view name, std::int64_t value) {
  if (value < 0) return invalid_argument(fmt::format("{}: {}{} = {} is negative", request, prefix, name, value));
  if (value > kMaxBlasInt) {
    return not_supported(
        fmt::format("{}: {}{} = {} exceeds the 32-bit integers of OpenBLAS and cuBLAS", request, prefix, name, value));
  }
  return Status();
}

}  // namespace

Status check_real_dtype(std::string_view request, DType dtype) {
  if (dtype == DType::f32 || dtype == DType::f64) return Status();
  return not_supported(fmt::format("{}: dtype {} is not supported; it takes f32 or f64", request, to_string(dtype)));
}

Status check_float_dtype(std::string_view request, DType dtype) {
  if (dtype == DType::f32 || dtype == DType::f64 || dtype == DType::f16 || dtype == DType::bf16) return Status();
  return not_supported(
      fmt::format("{}: dtype {} is not supported; it takes f32, f64, f16 or bf16", request, to_string(dtype)));
}

Status check_vector_dtype(std::string_view request, DType dtype) {
  switch (dtype) {
    case DType::f32:
    case DType::f64:
    case DType::c64:
    case DType::c128:
    case DType::f16:
    case DType::bf16: return Status();
    default:
      return not_supported(fmt::format("{}: dtype {} is not supported; it takes f32, f64, c64, c128, f16 or bf16",
                                       request, to_string(dtype)));
  }
}

Status check_size(std::string_view request, std::string_view name, std::int64_t value) {
  return check_size(request, "", name, value);
}

Status check_batch(std::string_view request, std::int64_t batch) {
  if (batch < 1) return invalid_argument(fmt::format("{}: batch = {} must be at least 1", request, batch));
  if (batch > kMaxBlasInt) {
    return not_supported(fmt::format("{}: batch = {} exceeds cuBLAS's 32-bit batch count", request, batch));
  }
  return Status();
}

Status check_transpose(std::string_view request, Transpose transpose) {
  if (transpose == Transpose::none || transpose == Transpose::transpose) return Status();
  return invalid_argument(
      fmt::format("{}: transpose = {} is neither none nor transpose", request, static_cast<int>(transpose)));
}

Status check_side(std::string_view request, Side side) {
  if (side == Side::left || side == Side::right) return Status();
  return invalid_argument(fmt::format("{}: side = {} is neither left nor right", request, static_cast<int>(side)));
}

Status check_fill(std::string_view request, Fill fill) {
  if (fill == Fill::lower || fill == Fill::upper) return Status();
  return invalid_argument(fmt::format("{}: fill = {} is neither lower nor upper", request, static_cast<int>(fill)));
}

Status check_diagonal(std::string_view request, Diagonal diagonal) {
  if (diagonal == Diagonal::non_unit || diagonal == Diagonal::unit) return Status();
  return invalid_argument(
      fmt::format("{}: diagonal = {} is neither non_unit nor unit", request, static_cast<int>(diagonal)));
}

Result<std::uint64_t> check_vector(std::string_view request, std::string_view name, std::int64_t n, std::int64_t inc,
                                   bool negative_allowed) {
  if (inc == 0) return invalid_argument(fmt::format("{}: inc{} = 0; it must not be 0", request, name));
  if (inc < 0 && !negative_allowed) {
    return invalid_argument(fmt::format("{}: inc{} = {} must be positive for this routine", request, name, inc));
  }
  if (inc < -kMaxBlasInt || inc > kMaxBlasInt) {
    return not_supported(
        fmt::format("{}: inc{} = {} exceeds the 32-bit integers of OpenBLAS and cuBLAS", request, name, inc));
  }
  if (n == 0) return std::uint64_t{0};
  // n and |inc| fit 31 bits, so the span fits 64.
  return static_cast<std::uint64_t>((n - 1) * (inc < 0 ? -inc : inc) + 1);
}

Result<std::uint64_t> check_vector_batch(std::string_view request, std::string_view name, std::uint64_t one,
                                         std::int64_t batch, std::int64_t& stride, bool written) {
  if (stride < 0) return invalid_argument(fmt::format("{}: stride_{} = {} is negative", request, name, stride));
  if (stride == 0) stride = static_cast<std::int64_t>(one);
  if (written && batch > 1 && static_cast<std::uint64_t>(stride) < one) {
    return invalid_argument(fmt::format("{}: stride_{} = {} makes the {} vectors {} overlap (each spans {} elements)",
                                        request, name, stride, batch, name, one));
  }
  return batch_span(request, "the batch of ", name, one, batch, stride);
}

Result<std::uint64_t> check_matrices(std::string_view request, std::string_view name, std::int64_t rows,
                                     std::int64_t cols, std::int64_t batch, std::int64_t& ld, std::int64_t& stride,
                                     bool written) {
  const std::int64_t min_ld = std::max<std::int64_t>(1, rows);
  if (ld < 0) return invalid_argument(fmt::format("{}: ld{} = {} is negative", request, name, ld));
  if (ld == 0) ld = min_ld;
  if (ld < min_ld) {
    return invalid_argument(fmt::format("{}: ld{} = {} is less than max(1, {}), the rows of the column-major {}",
                                        request, name, ld, rows, name));
  }
  ACCEL_RETURN_IF_ERROR(check_size(request, "ld", name, ld));
  if (stride < 0) return invalid_argument(fmt::format("{}: stride_{} = {} is negative", request, name, stride));
  // ld and cols fit 31 bits, so their products fit 64.
  const std::int64_t one = rows == 0 || cols == 0 ? 0 : ld * (cols - 1) + rows;
  if (stride == 0) stride = ld * cols;
  if (written && batch > 1 && stride < one) {
    return invalid_argument(fmt::format("{}: stride_{} = {} makes the {} matrices {} overlap (each spans {} elements)",
                                        request, name, stride, batch, name, one));
  }
  return batch_span(request, "", name, static_cast<std::uint64_t>(one), batch, stride);
}

std::string_view to_string(Side side) noexcept { return side == Side::left ? "left" : "right"; }
std::string_view to_string(Fill fill) noexcept { return fill == Fill::lower ? "lower" : "upper"; }
std::string_view to_string(Diagonal diagonal) noexcept { return diagonal == Diagonal::non_unit ? "non_unit" : "unit"; }

}  // namespace accel::blas

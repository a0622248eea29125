#include "libs/blas/stored_matrix.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace accel::blas {

Result<StoredLayout> check_stored_matrix(std::int64_t rows, std::int64_t cols, MatrixOrder order, std::int64_t ld,
                                         std::string_view name) {
  const bool row_major = order == MatrixOrder::row_major;
  const std::int64_t inner = row_major ? cols : rows;
  const std::int64_t outer = row_major ? rows : cols;
  if (ld < 0) return invalid_argument(fmt::format("negative ld{} = {}", name, ld));
  const std::int64_t minimum = std::max<std::int64_t>(1, inner);
  if (ld != 0 && ld < minimum) {
    return invalid_argument(fmt::format("ld{} = {} is smaller than the {} of the stored {} x {} {} matrix {} ({})",
                                        name, ld, row_major ? "columns" : "rows", rows, cols,
                                        row_major ? "row-major" : "column-major", name, minimum));
  }
  StoredLayout layout{.ld = ld == 0 ? minimum : ld};
  if (outer == 0 || inner == 0) return layout;
  std::int64_t extent = 0;
  if (__builtin_mul_overflow(outer - 1, layout.ld, &extent) || __builtin_add_overflow(extent, inner, &extent)) {
    return invalid_argument(
        fmt::format("matrix {} is too large: {} x ld {} overflows 64-bit element counts", name, outer, layout.ld));
  }
  layout.extent = static_cast<std::uint64_t>(extent);
  return layout;
}

}  // namespace accel::blas

#include "libs/sparse/sparse_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>

namespace accel::sparse {
namespace {

bool is_index(DType dtype) { return dtype == DType::i32 || dtype == DType::i64; }

std::int64_t index_max(DType index) {
  return index == DType::i64 ? std::numeric_limits<std::int64_t>::max() - 1 : std::numeric_limits<std::int32_t>::max();
}

// What every format shares: the structure promise, index and value types.
Status check_types(std::string_view request, std::string_view name, const Matrix& m, Values values) {
  if (m.structure != Structure::checked_each_use && m.structure != Structure::fixed) {
    return invalid_argument(fmt::format("{}: {}.structure = {} is neither checked_each_use nor fixed", request, name,
                                        static_cast<int>(m.structure)));
  }
  if (!is_index(m.index)) {
    return not_supported(
        fmt::format("{}: {}.index = {} is not supported; indices are i32 or i64", request, name, to_string(m.index)));
  }
  const bool single_double = m.dtype == DType::f32 || m.dtype == DType::f64;
  const bool half = m.dtype == DType::f16 || m.dtype == DType::bf16;
  if (!single_double && !(half && values == Values::with_half)) {
    return not_supported(fmt::format("{}: {}.dtype = {} is not supported; this request takes {}", request, name,
                                     to_string(m.dtype),
                                     values == Values::with_half ? "f32, f64, f16 or bf16" : "f32 or f64"));
  }
  return Status();
}

}  // namespace

Status check_matrix(std::string_view request, std::string_view name, const Matrix& m, Values values) {
  if (m.format == Format::blocked_ell) {
    return not_supported(fmt::format("{}: {} is blocked_ell, which only sparse::SpMM takes", request, name));
  }
  if (m.format != Format::csr && m.format != Format::csc && m.format != Format::coo) {
    return invalid_argument(fmt::format("{}: {}.format = {} is not csr, csc, coo or blocked_ell", request, name,
                                        static_cast<int>(m.format)));
  }
  ACCEL_RETURN_IF_ERROR(check_types(request, name, m, values));
  if (m.ell_block_size != 0) {
    return invalid_argument(
        fmt::format("{}: {} is {}, but its ell_block_size = {} is set (it is blocked_ell's; 0 "
                    "otherwise)",
                    request, name, to_string(m.format), m.ell_block_size));
  }
  for (auto [field, value] : {std::pair{"rows", m.rows}, {"cols", m.cols}, {"nnz", m.nnz}}) {
    if (value < 0) return invalid_argument(fmt::format("{}: {}.{} = {} is negative", request, name, field, value));
    if (value > index_max(m.index)) {
      return invalid_argument(
          fmt::format("{}: {}.{} = {} does not fit its {} indices", request, name, field, value, to_string(m.index)));
    }
  }
  // Products of values that fit 63 bits: compared in 128 so that a huge shape cannot wrap.
  if (static_cast<__int128>(m.nnz) > static_cast<__int128>(m.rows) * m.cols) {
    return invalid_argument(
        fmt::format("{}: {}.nnz = {} exceeds the {} x {} entries of the matrix", request, name, m.nnz, m.rows, m.cols));
  }
  return Status();
}

Status check_blocked_ell(std::string_view request, std::string_view name, const Matrix& m, Values values) {
  ACCEL_RETURN_IF_ERROR(check_types(request, name, m, values));
  for (auto [field, value] : {std::pair{"rows", m.rows}, {"cols", m.cols}, {"nnz", m.nnz}}) {
    if (value < 0) return invalid_argument(fmt::format("{}: {}.{} = {} is negative", request, name, field, value));
  }
  const std::int64_t bs = m.ell_block_size;
  if (bs < 1) return invalid_argument(fmt::format("{}: {}.ell_block_size = {} is not positive", request, name, bs));
  if (m.rows != 0 && m.nnz % m.rows != 0) {
    return invalid_argument(
        fmt::format("{}: {}.nnz = {} is not rows x ell_cols: {} rows do not divide it", request, name, m.nnz, m.rows));
  }
  if (m.rows == 0 && m.nnz != 0) {
    return invalid_argument(
        fmt::format("{}: {}.nnz = {}, but a blocked_ell matrix without rows stores nothing", request, name, m.nnz));
  }
  const std::int64_t stored = ell_cols(m);
  for (auto [field, value] : {std::pair{"rows", m.rows}, {"cols", m.cols}, {"ell_cols (nnz / rows)", stored}}) {
    if (value % bs != 0) {
      return invalid_argument(
          fmt::format("{}: {}.{} = {} is not a multiple of its ell_block_size {}", request, name, field, value, bs));
    }
  }
  if (stored > m.cols) {
    return invalid_argument(
        fmt::format("{}: {}'s ell_cols (nnz / rows) = {} exceeds its {} columns", request, name, stored, m.cols));
  }
  if (m.cols / bs > index_max(m.index)) {
    return invalid_argument(fmt::format("{}: {}'s {} column blocks do not fit its {} indices", request, name,
                                        m.cols / bs, to_string(m.index)));
  }
  if (!m.offsets.is_null()) {
    return invalid_argument(
        fmt::format("{}: {}.offsets is set, but a blocked_ell matrix has no offsets (leave it null)", request, name));
  }
  return Status();
}

Status check_square(std::string_view request, std::string_view name, const Matrix& m) {
  if (m.rows == m.cols) return Status();
  return invalid_argument(fmt::format("{}: {} is {} x {}, not square", request, name, m.rows, m.cols));
}

Status check_format(std::string_view request, std::string_view name, const Matrix& m, Format format) {
  if (m.format == format) return Status();
  return invalid_argument(
      fmt::format("{}: {} is {}; this request takes {}", request, name, to_string(m.format), to_string(format)));
}

Status check_transpose(std::string_view request, std::string_view name, Transpose op) {
  if (op == Transpose::none || op == Transpose::transpose) return Status();
  return invalid_argument(
      fmt::format("{}: {} = {} is neither none nor transpose", request, name, static_cast<int>(op)));
}

Status check_same_types(std::string_view request, std::string_view name, const Matrix& other, const Matrix& m) {
  if (other.index == m.index && other.dtype == m.dtype) return Status();
  return invalid_argument(fmt::format("{}: {} holds {} indices and {} values; a's are {} and {}", request, name,
                                      to_string(other.index), to_string(other.dtype), to_string(m.index),
                                      to_string(m.dtype)));
}

Result<std::uint64_t> check_dense(std::string_view request, std::string_view name, DenseMatrix& d, std::int64_t rows,
                                  std::int64_t cols) {
  if (d.order != MatrixOrder::column_major && d.order != MatrixOrder::row_major) {
    return invalid_argument(fmt::format("{}: {}.order = {} is neither row_major nor column_major", request, name,
                                        static_cast<int>(d.order)));
  }
  if (d.rows != rows || d.cols != cols) {
    return invalid_argument(
        fmt::format("{}: {} is {} x {}; it must be {} x {}", request, name, d.rows, d.cols, rows, cols));
  }
  const bool column_major = d.order == MatrixOrder::column_major;
  const std::int64_t inner = column_major ? rows : cols, outer = column_major ? cols : rows;
  const std::int64_t min_ld = std::max<std::int64_t>(1, inner);
  if (d.ld == 0) d.ld = min_ld;
  if (d.ld < min_ld) {
    return invalid_argument(fmt::format("{}: {}.ld = {} is less than {}, the {} of {}", request, name, d.ld, min_ld,
                                        column_major ? "rows" : "columns", name));
  }
  if (rows == 0 || cols == 0) return std::uint64_t{0};
  std::int64_t extent = 0;
  if (__builtin_mul_overflow(d.ld, outer - 1, &extent) || __builtin_add_overflow(extent, inner, &extent)) {
    return invalid_argument(fmt::format("{}: {} is too large: ld {} x {} overflows", request, name, d.ld, outer));
  }
  return static_cast<std::uint64_t>(extent);
}

std::uint64_t offsets_count(const Matrix& m) noexcept {
  const StructureShape shape = structure_shape(m);
  return static_cast<std::uint64_t>(m.format == Format::coo ? m.nnz : shape.outer + 1);
}

void read_matrix(Operands& operands, const Matrix& m, std::string_view name) {
  const auto nnz = static_cast<std::uint64_t>(m.nnz);
  if (m.format == Format::blocked_ell) {
    // No offsets: the place is kept, so that every format's views start offsets, indices, values.
    operands.absent(fmt::format("{}.offsets", name));
    operands.typed(m.indices, fmt::format("{}.indices", name), Access::read, m.index,
                   static_cast<std::uint64_t>(structure_shape(m).nnz));
  } else {
    operands.typed(m.offsets, fmt::format("{}.offsets", name), Access::read, m.index, offsets_count(m));
    operands.typed(m.indices, fmt::format("{}.indices", name), Access::read, m.index, nnz);
  }
  operands.typed(m.values, fmt::format("{}.values", name), Access::read, m.dtype, nnz);
}

void read_dense(Operands& operands, BufferHandle buffer, std::string_view name, DType dtype, std::uint64_t count) {
  operands.typed(buffer, std::string(name), Access::read, dtype, count);
}

void write_dense(Operands& operands, BufferHandle buffer, std::string_view name, DType dtype, std::uint64_t count) {
  operands.add({.buffer = buffer,
                .name = std::string(name),
                .access = Access::write,
                .count = count,
                .check_dtype = true,
                .dtype = dtype,
                .exclusive = true});
}

void write_matrix(Operands& operands, const Matrix& m, std::string_view name) {
  const auto nnz = static_cast<std::uint64_t>(m.nnz);
  write_dense(operands, m.offsets, fmt::format("{}.offsets", name), m.index, offsets_count(m));
  write_dense(operands, m.indices, fmt::format("{}.indices", name), m.index, nnz);
  write_dense(operands, m.values, fmt::format("{}.values", name), m.dtype, nnz);
}

Status check_output_nnz(std::string_view request, std::string_view name, std::int64_t declared, std::int64_t actual,
                        std::string_view count_request) {
  if (declared == actual) return Status();
  return Status(Code::failed_precondition, fmt::format("{}: {}.nnz = {}, but the result has {} entries; {} gives them",
                                                       request, name, declared, actual, count_request));
}

Status check_cpu_values(std::string_view request, const Matrix& m) {
  if (m.dtype == DType::f32 || m.dtype == DType::f64) return Status();
  return not_supported(fmt::format("{}: the CPU device computes in f32 or f64, not {}; {} runs on CUDA", request,
                                   to_string(m.dtype), to_string(m.dtype)));
}

Status check_host_structure(std::string_view request, std::string_view name, const Matrix& m, const BufferView& offsets,
                            const BufferView& indices) {
  const StructureShape shape = structure_shape(m);
  return structure_status(request, name, shape, check_structure(shape, m.index, offsets.data, indices.data));
}

}  // namespace accel::sparse

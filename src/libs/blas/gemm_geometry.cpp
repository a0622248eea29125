#include <fmt/format.h>

#include "accel/libs/blas/gemm.hpp"
#include "libs/blas/stored_matrix.hpp"

namespace accel {
namespace {

Result<std::uint64_t> batched_extent(std::uint64_t one, std::int64_t batch, std::int64_t stride,
                                     std::string_view name) {
  if (one == 0) return std::uint64_t{0};
  std::int64_t extent = 0;
  if (__builtin_mul_overflow(batch - 1, stride, &extent) ||
      __builtin_add_overflow(extent, static_cast<std::int64_t>(one), &extent)) {
    return invalid_argument(
        fmt::format("batched {} is too large: {} batches x stride {} overflows", name, batch, stride));
  }
  return static_cast<std::uint64_t>(extent);
}

struct Stored {
  std::int64_t rows;
  std::int64_t cols;
};

}  // namespace

Result<GemmGeometry> plan_gemm_geometry(const GemmShape& shape) {
  if (shape.m < 0 || shape.n < 0 || shape.k < 0) {
    return invalid_argument(fmt::format("negative GEMM size m={} n={} k={}", shape.m, shape.n, shape.k));
  }
  if (shape.batch < 1) return invalid_argument(fmt::format("GEMM batch must be at least 1, got {}", shape.batch));
  if (shape.lda < 0 || shape.ldb < 0 || shape.ldc < 0) {
    return invalid_argument(
        fmt::format("negative leading dimension lda={} ldb={} ldc={}", shape.lda, shape.ldb, shape.ldc));
  }
  if (shape.stride_a < 0 || shape.stride_b < 0 || shape.stride_c < 0) {
    return invalid_argument(fmt::format("negative batch stride stride_a={} stride_b={} stride_c={}", shape.stride_a,
                                        shape.stride_b, shape.stride_c));
  }
  const bool row_major = shape.order == MatrixOrder::row_major;
  // cuBLASLt's bias runs along C's contiguous dimension; the CPU device keeps to what cuBLASLt fuses, so that a
  // request means the same on every device.
  ACCEL_RETURN_IF_ERROR(check_fusable(row_major ? "Gemm (row-major C)" : "Gemm (column-major C)", shape.epilogue,
                                      {Activation::identity, Activation::relu, Activation::gelu_tanh},
                                      {BiasVector::none, row_major ? BiasVector::per_column : BiasVector::per_row}));

  GemmGeometry g;
  g.shape = shape;
  const bool ta = shape.transpose_a == Transpose::transpose;
  const bool tb = shape.transpose_b == Transpose::transpose;
  const Stored a{ta ? shape.k : shape.m, ta ? shape.m : shape.k};
  const Stored b{tb ? shape.n : shape.k, tb ? shape.k : shape.n};
  const Stored c{shape.m, shape.n};
  g.a_rows = a.rows;
  g.a_cols = a.cols;
  g.b_rows = b.rows;
  g.b_cols = b.cols;

  ACCEL_ASSIGN_OR_RETURN(const blas::StoredLayout a_layout,
                         blas::check_stored_matrix(a.rows, a.cols, shape.order, shape.lda, "a"));
  ACCEL_ASSIGN_OR_RETURN(const blas::StoredLayout b_layout,
                         blas::check_stored_matrix(b.rows, b.cols, shape.order, shape.ldb, "b"));
  ACCEL_ASSIGN_OR_RETURN(const blas::StoredLayout c_layout,
                         blas::check_stored_matrix(c.rows, c.cols, shape.order, shape.ldc, "c"));
  g.shape.lda = a_layout.ld;
  g.shape.ldb = b_layout.ld;
  g.shape.ldc = c_layout.ld;
  const std::uint64_t a_one = a_layout.extent;
  const std::uint64_t b_one = b_layout.extent;
  const std::uint64_t c_one = c_layout.extent;

  // Packed batch strides are the stored matrix's full footprint (outer * ld), as BLAS libraries expect: one ld
  // more than the extent check_stored_matrix bounded, so it may still overflow.
  auto packed_stride = [&](Stored s, std::int64_t ld, std::int64_t given, char name) -> Result<std::int64_t> {
    std::int64_t stride = given;
    if (given == 0 && __builtin_mul_overflow(row_major ? s.rows : s.cols, ld, &stride)) {
      return invalid_argument(
          fmt::format("matrix {} is too large: its packed batch stride ({} x {} x ld {}) overflows "
                      "64-bit element counts",
                      name, s.rows, s.cols, ld));
    }
    return stride;
  };
  ACCEL_ASSIGN_OR_RETURN(g.shape.stride_a, packed_stride(a, g.shape.lda, shape.stride_a, 'a'));
  ACCEL_ASSIGN_OR_RETURN(g.shape.stride_b, packed_stride(b, g.shape.ldb, shape.stride_b, 'b'));
  ACCEL_ASSIGN_OR_RETURN(g.shape.stride_c, packed_stride(c, g.shape.ldc, shape.stride_c, 'c'));
  if (shape.batch > 1 && static_cast<std::uint64_t>(g.shape.stride_c) < c_one) {
    return invalid_argument(
        fmt::format("stride_c = {} makes the {} output matrices of the batch overlap (each spans {} "
                    "elements)",
                    g.shape.stride_c, shape.batch, c_one));
  }
  ACCEL_ASSIGN_OR_RETURN(g.a_extent, batched_extent(a_one, shape.batch, g.shape.stride_a, "a"));
  ACCEL_ASSIGN_OR_RETURN(g.b_extent, batched_extent(b_one, shape.batch, g.shape.stride_b, "b"));
  ACCEL_ASSIGN_OR_RETURN(g.c_extent, batched_extent(c_one, shape.batch, g.shape.stride_c, "c"));
  g.bias_extent = shape.epilogue.has_bias() ? static_cast<std::uint64_t>(row_major ? shape.n : shape.m) : 0;
  return g;
}

std::string_view to_string(MatrixOrder order) noexcept {
  return order == MatrixOrder::row_major ? "row_major" : "column_major";
}
std::string_view to_string(Transpose transpose) noexcept { return transpose == Transpose::none ? "N" : "T"; }

std::string to_string(const GemmShape& s) {
  return fmt::format("gemm {}{} {} m={} n={} k={} lda={} ldb={} ldc={} batch={} {}->{} epilogue={}",
                     to_string(s.transpose_a), to_string(s.transpose_b), to_string(s.order), s.m, s.n, s.k, s.lda,
                     s.ldb, s.ldc, s.batch, to_string(s.input_type), to_string(s.output_type), to_string(s.epilogue));
}

}  // namespace accel

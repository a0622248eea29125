// The checks every sparse request shares, made before any buffer is resolved (Operation<...>::validate): a sparse
// matrix's shape, types and nnz, a dense matrix's leading dimension and extent, and the operand lists that make
// the device check each buffer's size and dtype. Errors name the request (its kName) and the operand.
#pragma once

#include <cstdint>
#include <string_view>

#include "accel/core/result.hpp"
#include "accel/libs/sparse/sparse.hpp"
#include "libs/sparse/structure.hpp"
#include "operation/operation.hpp"

namespace accel::sparse {

// The value dtypes a request takes: f32 and f64, or those and f16 and bf16 (SpMV, SpMM).
enum class Values : std::uint8_t { single_double, with_half };

// A sparse matrix named `name` ("a") in CSR, CSC or COO: format, index and value types, shape and nnz (which must fit
// its index type).
[[nodiscard]] Status check_matrix(std::string_view request, std::string_view name, const Matrix& m, Values values);
// A blocked-ELL matrix (SpMM's A; check_matrix refuses that format): types, block size, shape and nnz (sparse.hpp).
[[nodiscard]] Status check_blocked_ell(std::string_view request, std::string_view name, const Matrix& m, Values values);
[[nodiscard]] Status check_square(std::string_view request, std::string_view name, const Matrix& m);
[[nodiscard]] Status check_format(std::string_view request, std::string_view name, const Matrix& m, Format format);
[[nodiscard]] Status check_transpose(std::string_view request, std::string_view name, Transpose op);
// A second matrix `name` that must have `m`'s index and value types ("b" of a product with "a").
[[nodiscard]] Status check_same_types(std::string_view request, std::string_view name, const Matrix& other,
                                      const Matrix& m);

// A dense rows x cols matrix: resolves its leading dimension in place (0: packed) and returns the elements it spans.
[[nodiscard]] Result<std::uint64_t> check_dense(std::string_view request, std::string_view name, DenseMatrix& d,
                                                std::int64_t rows, std::int64_t cols);

// The rows and columns of op(m).
[[nodiscard]] inline std::int64_t op_rows(const Matrix& m, Transpose op) noexcept {
  return op == Transpose::none ? m.rows : m.cols;
}
[[nodiscard]] inline std::int64_t op_cols(const Matrix& m, Transpose op) noexcept {
  return op == Transpose::none ? m.cols : m.rows;
}

// The elements of a matrix's offsets buffer: outer + 1, or nnz for COO.
[[nodiscard]] std::uint64_t offsets_count(const Matrix& m) noexcept;

// The matrix's three buffers, read, in the order offsets, indices, values (a blocked-ELL's offsets absent).
void read_matrix(Operands& operands, const Matrix& m, std::string_view name);
// A dense operand of `count` elements, read; or written, sharing its buffer with no other operand.
void read_dense(Operands& operands, BufferHandle buffer, std::string_view name, DType dtype, std::uint64_t count);
void write_dense(Operands& operands, BufferHandle buffer, std::string_view name, DType dtype, std::uint64_t count);
// A CSR matrix's three buffers, written (the outputs of SpGemm and DenseToCsr), each exclusive.
void write_matrix(Operands& operands, const Matrix& m, std::string_view name);

// The nnz a two-phase request's output declares against the one it has (SpGemm: A·B's; DenseToCsr: the dense
// matrix's nonzeros): failed_precondition when they differ, before anything is written.
[[nodiscard]] Status check_output_nnz(std::string_view request, std::string_view name, std::int64_t declared,
                                      std::int64_t actual, std::string_view count_request);

// f32 and f64 only: what the CPU device computes in (Eigen over f16 and bf16 would be a conversion, not cuSPARSE's).
[[nodiscard]] Status check_cpu_values(std::string_view request, const Matrix& m);

// The structural check of a matrix resolved on the host (the CPU device): its views at `first` (offsets, indices).
[[nodiscard]] Status check_host_structure(std::string_view request, std::string_view name, const Matrix& m,
                                          const BufferView& offsets, const BufferView& indices);

}  // namespace accel::sparse

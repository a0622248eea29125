// The checks every dense solver request shares, made before any buffer is resolved (Operation<...>::validate):
// scalars, dtypes, and the stored matrices' leading dimensions, strides and extents. Errors name the request
// (its kName) and the field.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "accel/core/result.hpp"
#include "accel/libs/solver/dense.hpp"
#include "operation/operation.hpp"

namespace accel::solver {

// LAPACK's and cuSOLVER's integers (sizes, leading dimensions, workspace lengths) are 32-bit.
inline constexpr std::int64_t kMaxLapackInt = 2147483647;

// What validate() makes of a request (the Checked of its Operation): the request with its leading dimensions and
// strides resolved, and the elements its matrices span.
template <class Request>
struct Resolved {
  Request request;
  std::uint64_t a_extent = 0;
  std::uint64_t b_extent = 0;
};

// Whether a validated dtype is real (f32 or f64): the only ones the family's own CUDA kernels take.
[[nodiscard]] inline bool is_real(DType dtype) noexcept { return dtype == DType::f32 || dtype == DType::f64; }

// f32, f64, c64 or c128: every dense request takes the complex dtypes (LAPACK's and cuSOLVER's C and Z routines; for
// eigen, Hermitian matrices and real eigenvalues; for the SVDs, real values and unitary U and V; Ormqr's and Gels's
// transposes conjugated); not_supported otherwise, naming what it takes.
[[nodiscard]] Status check_dtype(std::string_view request, DType dtype);
[[nodiscard]] Status check_fill(std::string_view request, Fill fill);
[[nodiscard]] Status check_side(std::string_view request, Side side);
[[nodiscard]] Status check_transpose(std::string_view request, Transpose transpose);
// 0 <= value <= kMaxLapackInt.
[[nodiscard]] Status check_size(std::string_view request, std::string_view name, std::int64_t value);
[[nodiscard]] Status check_batch(std::string_view request, std::int64_t batch);

// A batch of `batch` column-major rows x cols matrices named `name` ("a"): resolves its leading dimension (0:
// rows; at least max(1, rows)) and its stride (0: ld * cols) in place and returns the elements it spans. The
// matrices of a written batch must not overlap.
[[nodiscard]] Result<std::uint64_t> check_matrices(std::string_view request, std::string_view name, std::int64_t rows,
                                                   std::int64_t cols, std::int64_t batch, std::int64_t& ld,
                                                   std::int64_t& stride, bool written);

// `per` elements for each of `batch` matrices, packed.
[[nodiscard]] Result<std::uint64_t> vector_extent(std::string_view request, std::string_view name, std::int64_t per,
                                                  std::int64_t batch);

// Operand lists: a matrix batch of `dtype` read, or written in place (shares its buffer with nothing else).
void read_matrix(Operands& operands, BufferHandle buffer, std::string_view name, DType dtype, std::uint64_t count);
void write_matrix(Operands& operands, BufferHandle buffer, std::string_view name, DType dtype, std::uint64_t count);
// An optional written vector (an info buffer): absent when null.
void write_optional(Operands& operands, BufferHandle buffer, std::string_view name, DType dtype, std::uint64_t count);

// Calls f(std::type_identity<E>{}) with E the element type of a validated dtype: float, double, or C64 and C128, the
// complex types of the library called (std::complex on the CPU, cuComplex and cuDoubleComplex on CUDA).
template <class C64, class C128, class F>
decltype(auto) with_element_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f64: return f(std::type_identity<double>{});
    case DType::c64: return f(std::type_identity<C64>{});
    case DType::c128: return f(std::type_identity<C128>{});
    default: return f(std::type_identity<float>{});
  }
}

// The element offset of matrix `index` of a batch.
[[nodiscard]] inline std::uint64_t matrix_offset(std::int64_t index, std::int64_t stride) noexcept {
  return static_cast<std::uint64_t>(index) * static_cast<std::uint64_t>(stride);
}

}  // namespace accel::solver

// The checks every BLAS request beyond GEMM makes before anything runs (include/accel/libs/blas/level{1,2,3}.hpp):
// dtypes, sizes, increments, leading dimensions and batch strides, each error naming the request and the field. Sizes
// must fit the 32-bit integers that OpenBLAS (this build's blasint) and cuBLAS's legacy API take, on every device
// alike, so that a request valid on one device is valid on all.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "accel/core/result.hpp"
#include "accel/libs/blas/level3.hpp"
#include "operation/operation.hpp"

namespace accel::blas {

inline constexpr std::int64_t kMaxBlasInt = 2147483647;

// not_supported unless f32 or f64.
[[nodiscard]] Status check_real_dtype(std::string_view request, DType dtype);
// not_supported unless f32, f64, f16 or bf16 (Gemv's operands).
[[nodiscard]] Status check_float_dtype(std::string_view request, DType dtype);
// not_supported unless f32, f64, c64, c128, f16 or bf16 (level 1's vectors).
[[nodiscard]] Status check_vector_dtype(std::string_view request, DType dtype);
// 0 <= value <= kMaxBlasInt.
[[nodiscard]] Status check_size(std::string_view request, std::string_view name, std::int64_t value);
[[nodiscard]] Status check_batch(std::string_view request, std::int64_t batch);
// The enumerators, in case bytes from outside made one of no name.
[[nodiscard]] Status check_transpose(std::string_view request, Transpose transpose);
[[nodiscard]] Status check_side(std::string_view request, Side side);
[[nodiscard]] Status check_fill(std::string_view request, Fill fill);
[[nodiscard]] Status check_diagonal(std::string_view request, Diagonal diagonal);

// What a vector of n elements at increment `inc` spans: (n - 1) * |inc| + 1 elements, 0 for n = 0. An increment of 0,
// or (unless `negative_allowed`) a negative one, is refused, as is one beyond kMaxBlasInt.
[[nodiscard]] Result<std::uint64_t> check_vector(std::string_view request, std::string_view name, std::int64_t n,
                                                 std::int64_t inc, bool negative_allowed);

// A batch of `batch` vectors spanning `one` elements each, `stride` apart (0: packed, `one`, resolved in place).
// Written vectors may not overlap. Returns the elements the batch spans.
[[nodiscard]] Result<std::uint64_t> check_vector_batch(std::string_view request, std::string_view name,
                                                       std::uint64_t one, std::int64_t batch, std::int64_t& stride,
                                                       bool written);

// A batch of rows x cols column-major matrices: ld (0: packed, max(1, rows)) and stride (0: packed, ld * cols)
// resolved in place and checked; written matrices may not overlap. Returns the elements the batch spans.
[[nodiscard]] Result<std::uint64_t> check_matrices(std::string_view request, std::string_view name, std::int64_t rows,
                                                   std::int64_t cols, std::int64_t batch, std::int64_t& ld,
                                                   std::int64_t& stride, bool written);

// A written operand of `count` elements of `dtype` that shares its buffer with no other operand of the request.
[[nodiscard]] inline Operand exclusive_output(BufferHandle buffer, std::string name, DType dtype, std::uint64_t count) {
  return {.buffer = buffer,
          .name = std::move(name),
          .access = Access::write,
          .count = count,
          .check_dtype = true,
          .dtype = dtype,
          .exclusive = true};
}

// Calls f(std::type_identity<T>{}) with T the element type of a validated dtype: float or double.
template <class F>
decltype(auto) with_real_type(DType dtype, F&& f) {
  if (dtype == DType::f64) return std::forward<F>(f)(std::type_identity<double>{});
  return std::forward<F>(f)(std::type_identity<float>{});
}

// The address of matrix or vector `index` of a batch `stride` elements apart.
template <class T>
[[nodiscard]] T* batch_member(void* base, std::int64_t index, std::int64_t stride) noexcept {
  return static_cast<T*>(base) + index * stride;
}

}  // namespace accel::blas
